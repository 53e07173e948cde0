/**
 * Worker-thread entry (loaded through `worker-entry.mjs`): runs window tasks one at a time with
 * its own DuckDB instance, answering each request with its result or its error.
 */
import { parentPort } from 'node:worker_threads';
import { ParquetPartWriter } from './part-writer.ts';
import { runWindowTask, type WindowResult, type WindowTask } from './window-task.ts';

/** Main thread → worker. */
export type WorkerRequest = { readonly id: number; readonly task: WindowTask };

/** Worker → main thread. */
export type WorkerResponse =
  | { readonly id: number; readonly ok: true; readonly result: WindowResult }
  | { readonly id: number; readonly ok: false; readonly message: string; readonly stack?: string };

const port = parentPort;
if (!port) throw new Error('worker.ts must run in a worker thread');

const writer = await ParquetPartWriter.open({ threads: 1 });

port.on('message', async ({ id, task }: WorkerRequest) => {
  let response: WorkerResponse;
  try {
    response = { id, ok: true, result: await runWindowTask(writer, task) };
  } catch (error) {
    const failure = error instanceof Error ? error : new Error(String(error));
    response = { id, ok: false, message: `${failure.name}: ${failure.message}`, stack: failure.stack };
  }
  port.postMessage(response);
});
