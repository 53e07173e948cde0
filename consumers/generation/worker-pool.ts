/**
 * A fixed pool of worker threads running window tasks, one task per worker at a time. Workers
 * start on first use. A worker that dies (uncaught error, exit) fails its task with an error and
 * is replaced on the next dispatch, so a crash costs a retry of one window, never the pool.
 */
import { Worker } from 'node:worker_threads';
import type { WindowRunner } from './runner.ts';
import type { WindowResult, WindowTask } from './window-task.ts';
import type { WorkerRequest, WorkerResponse } from './worker.ts';

const ENTRY = new URL('./worker-entry.mjs', import.meta.url);

type Job = { id: number; task: WindowTask; resolve: (r: WindowResult) => void; reject: (e: Error) => void };
type Slot = { worker: Worker; job: Job | null };

/** Raised when a worker thread dies while running a window. */
export class WorkerCrashError extends Error {
  override name = 'WorkerCrashError';
}

/** A pool of `size` worker threads. */
export function createWorkerPool(size: number): WindowRunner {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('pool size must be an integer >= 1');
  const slots: (Slot | null)[] = new Array(size).fill(null);
  const queue: Job[] = [];
  let nextId = 0;
  let closed = false;

  const settle = (slot: Slot, index: number, error: Error | null, result?: WindowResult): void => {
    const job = slot.job;
    slot.job = null;
    if (error) {
      // A dead or failing-at-load worker is replaced; its DuckDB state is not trusted again.
      if (slots[index] === slot) slots[index] = null;
      void slot.worker.terminate();
    }
    if (job) {
      if (error) job.reject(error);
      else job.resolve(result as WindowResult);
    }
    dispatch();
  };

  const spawn = (index: number): Slot => {
    const slot: Slot = { worker: new Worker(ENTRY), job: null };
    slot.worker.on('message', (response: WorkerResponse) => {
      if (!slot.job || response.id !== slot.job.id) return;
      if (response.ok) settle(slot, index, null, response.result);
      else {
        const job = slot.job;
        slot.job = null;
        job.reject(Object.assign(new Error(response.message), { stack: response.stack }));
        dispatch();
      }
    });
    slot.worker.on('error', (error) =>
      settle(slot, index, new WorkerCrashError(`worker crashed: ${error.message}`)),
    );
    slot.worker.on('exit', (code) => {
      if (slot.job) settle(slot, index, new WorkerCrashError(`worker exited with code ${code}`));
      else if (slots[index] === slot) slots[index] = null;
    });
    slots[index] = slot;
    return slot;
  };

  const dispatch = (): void => {
    if (closed) return;
    for (let index = 0; index < size && queue.length > 0; index++) {
      const slot = slots[index] ?? spawn(index);
      if (slot.job) continue;
      const job = queue.shift() as Job;
      slot.job = job;
      slot.worker.postMessage({ id: job.id, task: job.task } satisfies WorkerRequest);
    }
  };

  return {
    concurrency: size,
    run(task) {
      if (closed) return Promise.reject(new Error('worker pool is closed'));
      return new Promise<WindowResult>((resolve, reject) => {
        queue.push({ id: nextId++, task, resolve, reject });
        dispatch();
      });
    },
    async close() {
      closed = true;
      const stopped = new Error('worker pool closed');
      for (const job of queue.splice(0)) job.reject(stopped);
      const running = slots.filter((slot): slot is Slot => slot !== null);
      slots.fill(null);
      for (const slot of running) {
        slot.job?.reject(stopped);
        slot.job = null;
      }
      await Promise.all(running.map((slot) => slot.worker.terminate()));
    },
  };
}
