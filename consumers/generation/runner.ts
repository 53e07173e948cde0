/**
 * Where windows run. `createInProcessRunner` runs them one by one on this thread;
 * `createWorkerPool` (worker-pool.ts) runs up to N at once on worker threads. Both run the
 * same `runWindowTask`, so the choice never changes the parts.
 */
import { ParquetPartWriter } from './part-writer.ts';
import { runWindowTask, type WindowResult, type WindowTask } from './window-task.ts';

/** Runs window tasks; `concurrency` is how many it runs at once. */
export interface WindowRunner {
  readonly concurrency: number;
  /** Runs one task; rejects with the task's error (the caller decides about retries). */
  run(task: WindowTask): Promise<WindowResult>;
  /**
   * Stops and releases DuckDB; resolves when nothing runs any more. A window already inside
   * DuckDB is let finish, never killed (the worker pool rejects its caller at once; the
   * in-process runner simply waits for it). Safe to call more than once.
   */
  close(): Promise<void>;
}

/** A runner on the calling thread with one DuckDB instance, one window at a time. */
export function createInProcessRunner(): WindowRunner {
  let writer: Promise<ParquetPartWriter> | null = null;
  let queue: Promise<unknown> = Promise.resolve();
  return {
    concurrency: 1,
    run(task) {
      writer ??= ParquetPartWriter.open({ threads: 1 });
      const opened = writer;
      // One connection, one staging table: serialize even if a caller overlaps calls.
      const result = queue.then(async () => runWindowTask(await opened, task));
      queue = result.catch(() => undefined);
      return result;
    },
    async close() {
      await queue;
      const opened = writer;
      writer = null;
      if (opened) (await opened).close();
    },
  };
}
