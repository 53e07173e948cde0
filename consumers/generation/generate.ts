/**
 * `generateDataset`: the generation engine behind `POST /data/generate` (composition root).
 *
 * plan windows → run each window (workers or in-process) with retries → ZSTD parts on disk →
 * stitch them in window order (column chunks copied byte for byte, one new footer with job_id,
 * manifest_hash and row_count in the key-value metadata) straight into the artifact store.
 * Windows stream to part files, so memory stays bounded by the concurrency, never by the
 * duration. Given the process's `pool`, the windows run on its warm threads (a session of them)
 * and the threads outlive the job. The store makes the artifact visible only once whole: a
 * failed or aborted job leaves no artifact and no part files behind.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { manifestHash, type SimulationManifest } from '../../contracts/manifest.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import { InOrder } from './in-order.ts';
import { RetriesExhaustedError, withRetries } from './retry.ts';
import { createInProcessRunner, type WindowRunner } from './runner.ts';
import { localPart, type StitchPart, stitchToStore } from './stitch.ts';
import type { WindowResult } from './window-task.ts';
import { estimateRows, type GenerationWindow, planWindows } from './windows.ts';
import { createWorkerPool, type WorkerPool } from './worker-pool.ts';

/** The artifact's key-value metadata (Parquet footer), as the spec requires. */
export type ArtifactMetadata = { job_id: string; manifest_hash: string; row_count: number };

/** What to generate and where. */
export type GenerateDatasetOptions = {
  /** A normalized manifest (`normalizeManifest(input).manifest`): every default filled. */
  readonly manifest: SimulationManifest;
  /** Written into the artifact's metadata. */
  readonly jobId: string;
  /** Where the artifact goes: a store and a name in it; or `outPath`. */
  readonly output?: { readonly store: ArtifactStore; readonly name: string };
  /** A local artifact path (its directory is created if missing). */
  readonly outPath?: string;
  /** Where part files go (a private subdirectory, removed at the end); default: the OS temp directory. */
  readonly tmpDir?: string;
  /** Called after each window, with rows written so far and the expected total. */
  readonly onProgress?: (rowsDone: number, rowsTotalEstimate: number) => void;
  readonly signal?: AbortSignal;
  /** Test hook: return true to make attempt `attempt` (0 = first) of window `windowIndex` fail. */
  readonly failWindows?: (windowIndex: number, attempt: number) => boolean;
  /** Rows per part file (tests use small values to exercise several parts per window). */
  readonly rowsPerPart?: number;
  /**
   * The process's warm worker threads (`createWorkerPool`), for `multiprocess` manifests: the job
   * runs on a session of min(`driver.workers`, pool size, windows) of them and leaves the threads
   * running. Without it the job starts and closes threads of its own (each costs over a CPU-second).
   */
  readonly pool?: WorkerPool;
};

/** The artifact: its name in the store; `path` is `store.locate(name)` (a local path, or `nats:…`). */
export type GeneratedDataset = {
  name: string;
  path: string;
  rowCount: number;
  bytes: number;
  manifestHash: string;
};

/** A job that failed: the window (null if none is to blame), the attempts in the message, `cause`. */
export class GenerationError extends Error {
  override name = 'GenerationError';
  constructor(
    message: string,
    readonly windowIndex: number | null,
    options?: { cause: unknown },
  ) {
    super(message, options);
  }
}

const describeWindow = (w: GenerationWindow): string =>
  `window ${w.index} [${w.fromMs / 1000} s, ${w.toMs / 1000} s)`;

function outputOf(options: GenerateDatasetOptions): { store: ArtifactStore; name: string } {
  if (options.output) return options.output;
  if (!options.outPath) throw new TypeError('generateDataset needs output or outPath');
  return { store: new LocalArtifactStore(dirname(options.outPath)), name: basename(options.outPath) };
}

/** Generates the dataset of `manifest` as one Parquet file in the output store. */
export async function generateDataset(options: GenerateDatasetOptions): Promise<GeneratedDataset> {
  const { manifest, jobId, signal } = options;
  signal?.throwIfAborted();
  const { store, name } = outputOf(options);
  const hash = manifestHash(manifest);
  const { driver, config } = manifest;
  const windows = planWindows(manifest.duration_seconds, driver.window_seconds);
  const estimate = estimateRows(config, manifest.duration_seconds * 1000);
  const tmpRoot = options.tmpDir ?? tmpdir();
  await mkdir(tmpRoot, { recursive: true });
  const partDir = await mkdtemp(join(tmpRoot, 'generation-'));
  const runner = runnerFor(options, windows.length);
  // Stops sibling windows (and backoff waits) once one window has failed for good.
  const stop = new AbortController();
  const onAbort = (): void => {
    stop.abort(signal?.reason);
    void runner.close();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  // Window i is stitched as soon as windows 0..i are written, alongside the windows still running.
  const written = new InOrder<WindowResult>(windows.length);
  let rowCount = 0;
  const metadata = (rows: number): Record<string, string> =>
    kvStrings({ job_id: jobId, manifest_hash: hash, row_count: rows });
  const stitching = stitchToStore(store, name, localParts(written), metadata, () => rowCount, signal);
  // A stitch that fails (the store) stops the windows too; its error is thrown below.
  stitching.catch((error: unknown) => stop.abort(error));
  try {
    try {
      const onWritten = (result: WindowResult): void => {
        rowCount += result.rows;
        written.put(result.index, result);
      };
      await runWindows(windows, runner, options, partDir, stop, estimate, onWritten);
    } catch (error) {
      written.fail(error);
      await stitching.catch(() => {});
      throw error;
    }
    // A private pool's threads wind down (DuckDB closes) while the last windows are copied.
    const closing = runner.close();
    const bytes = await stitching;
    await closing;
    signal?.throwIfAborted();
    options.onProgress?.(rowCount, rowCount);
    return { name, path: store.locate(name), rowCount, bytes, manifestHash: hash };
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await runner.close();
    await rm(partDir, { recursive: true, force: true });
  }
}

/**
 * Where the job's windows run. A shared pool's session is closed by the job (its own tasks only);
 * a private pool is the job's own, so closing the runner closes its threads.
 */
function runnerFor(options: GenerateDatasetOptions, windows: number): WindowRunner {
  const { driver } = options.manifest;
  if (!driver.multiprocess) return createInProcessRunner();
  const lanes = Math.max(1, Math.min(driver.workers, windows));
  return options.pool ? options.pool.session(Math.min(lanes, options.pool.size)) : createWorkerPool(lanes);
}

/** The windows' part files as stitch parts, in window order, each as soon as its window is in. */
async function* localParts(written: AsyncIterable<WindowResult>): AsyncGenerator<StitchPart> {
  for await (const result of written) for (const path of result.parts) yield await localPart(path);
}

/** The key-value metadata as Parquet stores it (strings). */
export const kvStrings = (m: ArtifactMetadata): Record<string, string> => ({
  job_id: m.job_id,
  manifest_hash: m.manifest_hash,
  row_count: String(m.row_count),
});

/** Runs every window with `runner.concurrency` lanes; hands each result to `onWritten` as it is in. */
async function runWindows(
  windows: readonly GenerationWindow[],
  runner: WindowRunner,
  options: GenerateDatasetOptions,
  partDir: string,
  stop: AbortController,
  estimate: number,
  onWritten: (result: WindowResult) => void,
): Promise<void> {
  const { config, driver } = options.manifest;
  const policy = { maxRetries: driver.max_retries, backoffSeconds: driver.backoff_seconds };
  let next = 0;
  let rowsDone = 0;
  const runOne = (window: GenerationWindow): Promise<WindowResult> =>
    withRetries(
      (attempt) =>
        runner.run({
          config,
          window,
          partDir,
          attempt,
          injectFailure: options.failWindows?.(window.index, attempt) ?? false,
          ...(options.rowsPerPart === undefined ? {} : { rowsPerPart: options.rowsPerPart }),
        }),
      policy,
      stop.signal,
    ).catch((error: unknown) => {
      if (error instanceof RetriesExhaustedError) {
        throw new GenerationError(
          `${describeWindow(window)} failed after ${error.attempts} attempt(s): ${error.message}`,
          window.index,
          { cause: error.cause },
        );
      }
      throw error;
    });
  const lane = async (): Promise<void> => {
    while (next < windows.length && !stop.signal.aborted) {
      const window = windows[next++] as GenerationWindow;
      const result = await runOne(window);
      onWritten(result);
      rowsDone += result.rows;
      options.onProgress?.(rowsDone, Math.max(estimate, rowsDone));
    }
  };
  const lanes = Array.from({ length: runner.concurrency }, () =>
    lane().catch((error: unknown) => {
      // The first failure ends the job: stop the other lanes now rather than after their windows.
      if (!stop.signal.aborted) {
        stop.abort(error);
        void runner.close();
      }
      throw error;
    }),
  );
  const settled = await Promise.allSettled(lanes);
  options.signal?.throwIfAborted();
  if (stop.signal.aborted) throw stop.signal.reason;
  if (settled.some((s) => s.status === 'rejected')) throw new GenerationError('a window failed', null);
}
