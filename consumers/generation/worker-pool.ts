/**
 * A fixed pool of worker threads running window tasks, one task per worker at a time. Workers
 * start on first use. A worker that dies (uncaught error, exit) fails its task with an error and
 * is replaced on the next dispatch, so a crash costs a retry of one window, never the pool.
 *
 * Closing never terminates a worker that may be inside DuckDB (that aborts the process, see
 * worker.ts): queued tasks are rejected at once, running ones are rejected too, but their worker
 * is asked to exit only after its current window returns, and `close` waits for that.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { WindowRunner } from './runner.ts';
import type { WindowResult, WindowTask } from './window-task.ts';
import type { WorkerRequest, WorkerResponse } from './worker.ts';

const ENTRY = new URL('./worker-entry.mjs', import.meta.url);

type Job = { id: number; task: WindowTask; resolve: (r: WindowResult) => void; reject: (e: Error) => void };
/** `busy` is the id of the request in flight (its job may already be settled by `close`). */
type Slot = { worker: Worker; busy: number | null; job: Job | null; exited: Promise<unknown> };

/** Raised when a worker thread dies while running a window. */
export class WorkerCrashError extends Error {
  override name = 'WorkerCrashError';
}

const send = (worker: Worker, request: WorkerRequest): void => worker.postMessage(request);

/** A pool of `size` worker threads. */
export function createWorkerPool(size: number): WindowRunner {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('pool size must be an integer >= 1');
  const slots: (Slot | null)[] = new Array(size).fill(null);
  const queue: Job[] = [];
  let nextId = 0;
  let closed = false;
  let closing: Promise<void> | null = null;

  const finish = (slot: Slot, outcome: { result: WindowResult } | { error: Error }): void => {
    const job = slot.job;
    slot.job = null;
    slot.busy = null;
    if (job && 'result' in outcome) job.resolve(outcome.result);
    else if (job && 'error' in outcome) job.reject(outcome.error);
    if (closed) send(slot.worker, { type: 'close' });
    else dispatch();
  };

  const spawn = (index: number): Slot => {
    const worker = new Worker(ENTRY);
    const slot: Slot = { worker, busy: null, job: null, exited: once(worker, 'exit') };
    worker.on('message', (response: WorkerResponse) => {
      if (response.id !== slot.busy) return;
      if (response.ok) finish(slot, { result: response.result });
      else finish(slot, { error: Object.assign(new Error(response.message), { stack: response.stack }) });
    });
    // A dead worker is never reused: the next dispatch starts a fresh one in its place.
    const die = (reason: string): void => {
      if (slots[index] === slot) slots[index] = null;
      const job = slot.job;
      slot.job = null;
      slot.busy = null;
      job?.reject(new WorkerCrashError(reason));
      dispatch();
    };
    worker.on('error', (error) => die(`worker crashed: ${error.message}`));
    worker.on('exit', (code) => die(`worker exited with code ${code}`));
    slots[index] = slot;
    return slot;
  };

  const dispatch = (): void => {
    if (closed) return;
    for (let index = 0; index < size && queue.length > 0; index++) {
      const slot = slots[index] ?? spawn(index);
      if (slot.busy !== null) continue;
      const job = queue.shift() as Job;
      slot.job = job;
      slot.busy = job.id;
      send(slot.worker, { type: 'run', id: job.id, task: job.task });
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
    close() {
      closing ??= (async () => {
        closed = true;
        const stopped = new Error('worker pool closed');
        for (const job of queue.splice(0)) job.reject(stopped);
        const live = slots.filter((slot): slot is Slot => slot !== null);
        slots.fill(null);
        for (const slot of live) {
          slot.job?.reject(stopped);
          slot.job = null;
          // An idle worker can go now; a busy one is told when its window returns (`finish`).
          if (slot.busy === null) send(slot.worker, { type: 'close' });
        }
        await Promise.all(live.map((slot) => slot.exited));
      })();
      return closing;
    },
  };
}
