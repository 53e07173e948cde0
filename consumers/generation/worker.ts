/**
 * Worker-thread entry (loaded through `worker-entry.mjs`): opens its own DuckDB instance, says it
 * is ready (the pool's `warm()` waits for that), then runs window tasks one at a time, answering
 * each request with its result or its error. It lives as long as its pool, across jobs.
 *
 * It stops only when asked (`close`): it closes DuckDB and its port, and the thread ends on its
 * own. `Worker.terminate()` while DuckDB has work in flight aborts the whole process from inside
 * the native binding ("terminate called after throwing an instance of 'Napi::Error'"), so the
 * pool never terminates a live worker.
 */
import { parentPort } from 'node:worker_threads';
import { ParquetPartWriter } from './part-writer.ts';
import { runWindowTask, type WindowResult, type WindowTask } from './window-task.ts';

/** Main thread → worker: run a task, or finish and exit. */
export type WorkerRequest =
  | { readonly type: 'run'; readonly id: number; readonly task: WindowTask }
  | { readonly type: 'close' };

/** Worker → main thread: ready (DuckDB open, once), then one answer per task. */
export type WorkerResponse =
  | { readonly ready: true }
  | { readonly id: number; readonly ok: true; readonly result: WindowResult }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly stack?: string };

const port = parentPort;
if (!port) throw new Error('worker.ts must run in a worker thread');

const writer = await ParquetPartWriter.open({ threads: 1 });
port.postMessage({ ready: true } satisfies WorkerResponse);

port.on('message', async (request: WorkerRequest) => {
  if (request.type === 'close') {
    writer.close();
    port.close();
    return;
  }
  let response: WorkerResponse;
  try {
    response = { id: request.id, ok: true, result: await runWindowTask(writer, request.task) };
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    response = {
      id: request.id,
      ok: false,
      message: `${failure.name}: ${failure.message}`,
      stack: failure.stack,
    };
  }
  port.postMessage(response);
});
