/**
 * A fixed pool of worker threads running window tasks, one task per worker at a time, meant to
 * live as long as its process: a thread costs over a CPU-second to start (tsx, the simulator,
 * DuckDB), so jobs borrow warm threads instead of starting their own. `warm()` starts every
 * thread and waits until each has DuckDB open; otherwise threads start on first use.
 *
 * A job runs through a `session(concurrency)`: a view of the pool with its own limit whose
 * `close()` rejects that job's waiting tasks, rejects its running ones at once too, and resolves
 * when those have returned from their threads; it never touches the threads nor other sessions.
 * Tasks of every session wait in one FIFO queue, so concurrent jobs share the threads in arrival
 * order.
 *
 * A thread that dies (uncaught error, exit) fails its task with `WorkerCrashError` and is replaced:
 * at once (and warmed) if it had started properly, else on the next dispatch, so a thread that
 * cannot start costs a retry of one window and never spins.
 *
 * Nothing here terminates a thread that may be inside DuckDB (that aborts the process, see
 * worker.ts): closing the pool rejects every task, asks each thread to exit when its current
 * window returns, and waits for that.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { WindowRunner } from './runner.ts';
import type { WindowResult, WindowTask } from './window-task.ts';
import type { WorkerRequest, WorkerResponse } from './worker.ts';

const ENTRY = new URL('./worker-entry.mjs', import.meta.url);

/** A task in the pool: `returned` resolves once no thread runs it any more (answered, crashed, never sent). */
type Job = {
  id: number;
  task: WindowTask;
  owner: Session | null;
  settled: boolean;
  resolve: (r: WindowResult) => void;
  reject: (e: Error) => void;
  returned: () => void;
};
/** `busy` is the job in flight (its caller may already be rejected by a close). */
type Slot = {
  worker: Worker;
  busy: Job | null;
  ready: Promise<void>;
  started: boolean;
  exited: Promise<unknown>;
};
type Session = { closed: boolean; running: Set<Promise<void>> };

/** Raised when a worker thread dies while running a window. */
export class WorkerCrashError extends Error {
  override name = 'WorkerCrashError';
}

/** The process's pool of window threads; itself a runner with `concurrency` = `size`. */
export interface WorkerPool extends WindowRunner {
  readonly size: number;
  /** Starts every thread not yet started; resolves when each has DuckDB open (or has died). */
  warm(): Promise<void>;
  /** A job's view: at most `concurrency` (≤ size) tasks at once; its `close` stops only its own tasks. */
  session(concurrency: number): WindowRunner;
  /** Thread ids of the live threads, and how many threads the pool has started in all. */
  threads(): { ids: number[]; started: number };
}

const send = (worker: Worker, request: WorkerRequest): void => worker.postMessage(request);

/** A pool of `size` worker threads. */
export function createWorkerPool(size: number): WorkerPool {
  if (!Number.isInteger(size) || size < 1) throw new RangeError('pool size must be an integer >= 1');
  const slots: (Slot | null)[] = new Array(size).fill(null);
  const queue: Job[] = [];
  let nextId = 0;
  let started = 0;
  let closed = false;
  let closing: Promise<void> | null = null;

  const settle = (job: Job, outcome: { result: WindowResult } | { error: Error }): void => {
    if (job.settled) return;
    job.settled = true;
    if ('result' in outcome) job.resolve(outcome.result);
    else job.reject(outcome.error);
  };

  const finish = (slot: Slot, outcome: { result: WindowResult } | { error: Error }): void => {
    const job = slot.busy as Job;
    slot.busy = null;
    settle(job, outcome);
    job.returned();
    if (closed) send(slot.worker, { type: 'close' });
    else dispatch();
  };

  const spawn = (index: number): Slot => {
    const worker = new Worker(ENTRY);
    started++;
    let ready = (): void => {};
    const slot: Slot = {
      worker,
      busy: null,
      ready: new Promise<void>((r) => {
        ready = r;
      }),
      started: false,
      exited: once(worker, 'exit'),
    };
    worker.on('message', (response: WorkerResponse) => {
      if ('ready' in response) {
        slot.started = true;
        ready();
        return;
      }
      if (response.id !== slot.busy?.id) return;
      if (response.ok) finish(slot, { result: response.result });
      else finish(slot, { error: Object.assign(new Error(response.message), { stack: response.stack }) });
    });
    // A dead thread is never reused. One that had started is replaced (and warmed) at once; one
    // that died starting is replaced only when a task needs it.
    const die = (reason: string): void => {
      ready();
      const current = slots[index] === slot;
      if (current) slots[index] = null;
      const job = slot.busy;
      slot.busy = null;
      if (job) {
        settle(job, { error: new WorkerCrashError(reason) });
        job.returned();
      }
      if (closed) return;
      if (current && slot.started) spawn(index);
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
      slot.busy = job;
      send(slot.worker, { type: 'run', id: job.id, task: job.task });
    }
  };

  /**
   * Rejects the jobs `which` selects: one not yet on a thread leaves the queue (and has returned);
   * one on a thread is rejected now and returns when its window does (a window is never killed).
   */
  const stopJobs = (which: (job: Job) => boolean, error: Error): void => {
    const kept: Job[] = [];
    for (const job of queue.splice(0)) {
      if (!which(job)) {
        kept.push(job);
        continue;
      }
      settle(job, { error });
      job.returned();
    }
    queue.push(...kept);
    for (const slot of slots) if (slot?.busy && which(slot.busy)) settle(slot.busy, { error });
  };

  const enqueue = (task: WindowTask, owner: Session | null): Promise<WindowResult> => {
    if (closed) return Promise.reject(new Error('worker pool is closed'));
    let returned = (): void => {};
    const gone = new Promise<void>((r) => {
      returned = r;
    });
    const result = new Promise<WindowResult>((resolve, reject) => {
      queue.push({ id: nextId++, task, owner, settled: false, resolve, reject, returned });
    });
    if (owner) {
      owner.running.add(gone);
      void gone.then(() => owner.running.delete(gone));
    }
    dispatch();
    return result;
  };

  return {
    size,
    concurrency: size,
    run: (task) => enqueue(task, null),
    warm() {
      if (closed) return Promise.resolve();
      for (let index = 0; index < size; index++) slots[index] ??= spawn(index);
      return Promise.all(slots.map((slot) => slot?.ready)).then(() => undefined);
    },
    session(concurrency) {
      if (!Number.isInteger(concurrency) || concurrency < 1)
        throw new RangeError('session concurrency must be an integer >= 1');
      const session: Session = { closed: false, running: new Set() };
      // Tasks past the session's limit wait here, before they enter the shared queue.
      const waiting: (() => void)[] = [];
      let inFlight = 0;
      let closingSession: Promise<void> | null = null;
      const limit = Math.min(concurrency, size);
      return {
        concurrency: limit,
        async run(task) {
          if (session.closed) throw new Error('generation session is closed');
          while (inFlight >= limit && !session.closed) await new Promise<void>((r) => waiting.push(r));
          if (session.closed) throw new Error('generation session is closed');
          inFlight++;
          try {
            return await enqueue(task, session);
          } finally {
            inFlight--;
            waiting.shift()?.();
          }
        },
        close() {
          closingSession ??= (async () => {
            session.closed = true;
            for (const wake of waiting.splice(0)) wake();
            stopJobs((job) => job.owner === session, new Error('generation session closed'));
            await Promise.all(session.running);
          })();
          return closingSession;
        },
      };
    },
    threads: () => ({
      ids: slots.filter((slot): slot is Slot => slot !== null).map((slot) => slot.worker.threadId),
      started,
    }),
    close() {
      closing ??= (async () => {
        closed = true;
        stopJobs(() => true, new Error('worker pool closed'));
        const live = slots.filter((slot): slot is Slot => slot !== null);
        slots.fill(null);
        // An idle thread can go now; a busy one is told when its window returns (`finish`).
        for (const slot of live) if (slot.busy === null) send(slot.worker, { type: 'close' });
        await Promise.all(live.map((slot) => slot.exited));
      })();
      return closing;
    },
  };
}
