/**
 * A job's windows spread over worker processes: the worker that took the job publishes one task
 * per window on the `JOBS` work queue (`jobs.window.<job>.<i>`, deduplicated by `<job>.<i>`), any
 * worker's window lanes write them (window-queue.ts), and this worker watches KV `job_windows`
 * for their outcomes, reports progress as windows complete, and stitches the parts in window order
 * by range reads from the artifact store (stitch.ts) into `<job>.parquet`: window i is copied as
 * soon as windows 0..i are in, so only the footer waits for the last window.
 * The parts' bytes are what `generateDataset` writes locally, and so is the stitched file.
 *
 * The wait has no deadline of its own, and needs none while some worker runs window lanes: every
 * task ends with an outcome in KV, written or failed, because JetStream never stops delivering it
 * and the delivery past the attempt limit records the failure (queue-delivery.ts). A redelivered
 * or handed-over job (its first worker died or stopped) finds the outcomes already recorded and
 * waits only for the rest. Parts and outcomes are removed once the job is stitched or has failed;
 * a worker shutting down (abort) keeps them for the next one.
 */

import {
  type WindowOutcome,
  type WindowTaskMessage,
  windowKey,
  windowSubject,
} from '../../contracts/jobs.ts';
import { manifestHash, type SimulationManifest } from '../../contracts/manifest.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import type { Bucket } from '../../platform/kv.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { type GeneratedDataset, GenerationError, kvStrings } from './generate.ts';
import { InOrder } from './in-order.ts';
import { type StitchPart, stitchToStore, storedPart } from './stitch.ts';
import { estimateRows, planWindows } from './windows.ts';

export type QueuedGenerationOptions = {
  readonly nats: Nats;
  readonly outcomes: Bucket<WindowOutcome>;
  readonly store: ArtifactStore;
  readonly manifest: SimulationManifest;
  readonly jobId: string;
  /** The artifact's name in `store`. */
  readonly name: string;
  readonly signal?: AbortSignal;
  readonly onProgress?: (rowsDone: number, rowsTotalEstimate: number) => void;
};

type Written = Extract<WindowOutcome, { ok: true }>;

/** Generates the job's artifact with its windows on the queue; resolves once it is stored whole. */
export async function generateOnQueue(options: QueuedGenerationOptions): Promise<GeneratedDataset> {
  const { nats, outcomes, store, manifest, jobId, name, signal } = options;
  signal?.throwIfAborted();
  const windows = planWindows(manifest.duration_seconds, manifest.driver.window_seconds);
  const estimate = estimateRows(manifest.config, manifest.duration_seconds * 1000);
  const hash = manifestHash(manifest);
  // Watch first, so that no outcome recorded while the tasks are published is missed.
  const watch = await outcomes.raw.watch({ key: `${jobId}.*` });
  const onAbort = (): void => watch.stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  // Window i is stitched as soon as windows 0..i are written, while later windows still run.
  const written = new InOrder<Written>(windows.length);
  let rowsDone = 0;
  const metadata = (rows: number): Record<string, string> =>
    kvStrings({ job_id: jobId, manifest_hash: hash, row_count: rows });
  const stitching = stitchToStore(store, name, storedParts(store, written), metadata, () => rowsDone, signal);
  let stitchFailed = false;
  stitching.catch(() => {
    stitchFailed = true;
    watch.stop();
  });
  try {
    await Promise.all(
      windows.map((window) => {
        const task: WindowTaskMessage = {
          job_id: jobId,
          config: manifest.config,
          window,
          max_retries: manifest.driver.max_retries,
          backoff_seconds: manifest.driver.backoff_seconds,
        };
        return nats.js.publish(windowSubject(jobId, window.index), encode(task), {
          msgID: windowKey(jobId, window.index),
        });
      }),
    );
    const seen: boolean[] = new Array(windows.length).fill(false);
    let done = 0;
    for await (const entry of watch) {
      if (entry.operation !== 'PUT' || entry.value.length === 0) continue;
      const index = Number(entry.key.slice(jobId.length + 1));
      const outcome = decode<WindowOutcome>(entry.value);
      if (!outcome.ok) {
        const w = windows[index];
        throw new GenerationError(
          `window ${index} [${(w?.fromMs ?? 0) / 1000} s, ${(w?.toMs ?? 0) / 1000} s) failed: ${outcome.message}`,
          index,
        );
      }
      if (seen[index]) continue;
      seen[index] = true;
      rowsDone += outcome.rows;
      written.put(index, outcome);
      options.onProgress?.(rowsDone, Math.max(estimate, rowsDone));
      if (++done === windows.length) break;
    }
    if (stitchFailed) await stitching;
    signal?.throwIfAborted();
    if (done < windows.length)
      throw new Error(`the outcome watch ended after ${done} of ${windows.length} windows`);
    const bytes = await stitching;
    options.onProgress?.(rowsDone, rowsDone);
    return { name, path: store.locate(name), rowCount: rowsDone, bytes, manifestHash: hash };
  } catch (error) {
    written.fail(error);
    await stitching.catch(() => {});
    throw signal?.aborted ? signal.reason : error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    watch.stop();
    if (!signal?.aborted) await discardWindows(outcomes, store, jobId, windows.length);
  }
}

/** The windows' stored parts, in window order, each as soon as its window is in. */
async function* storedParts(
  store: ArtifactStore,
  written: AsyncIterable<Written>,
): AsyncGenerator<StitchPart> {
  for await (const w of written)
    for (const p of w.parts) yield storedPart(store, p.name, p.footer, p.body_length);
}

/** Removes a job's parts and window outcomes (after the stitch, or when the job failed). */
async function discardWindows(
  outcomes: Bucket<WindowOutcome>,
  store: ArtifactStore,
  jobId: string,
  count: number,
): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const key = windowKey(jobId, index);
      const outcome = await outcomes.get(key).catch(() => null);
      if (outcome?.ok) await Promise.all(outcome.parts.map((p) => store.delete(p.name).catch(() => false)));
      await outcomes.delete(key).catch(() => {});
    }),
  );
}
