/**
 * `generateDataset`: the generation engine behind `POST /data/generate` (composition root).
 *
 * plan windows → run each window (workers or in-process) with retries → parts on disk →
 * merge in window order into `<outPath>` with job_id, manifest_hash and row_count in the
 * Parquet key-value metadata. Windows stream to part files, so memory stays bounded by the
 * concurrency, never by the duration. The artifact is written under a temporary name beside
 * `outPath` and renamed at the end: a failed or aborted job leaves no file at `outPath` and no
 * part files behind.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { manifestHash, type SimulationManifest } from '../../contracts/manifest.ts';
import { mergeParts } from './merge.ts';
import { RetriesExhaustedError, withRetries } from './retry.ts';
import { createInProcessRunner, type WindowRunner } from './runner.ts';
import type { WindowResult } from './window-task.ts';
import { estimateRows, type GenerationWindow, planWindows } from './windows.ts';
import { createWorkerPool } from './worker-pool.ts';

/** What to generate and where. */
export type GenerateDatasetOptions = {
  /** A normalized manifest (`normalizeManifest(input).manifest`): every default filled. */
  readonly manifest: SimulationManifest;
  /** Written into the artifact's metadata. */
  readonly jobId: string;
  /** Final artifact path; its directory is created if missing. */
  readonly outPath: string;
  /** Where part files go (a private subdirectory, removed at the end); default: the OS temp directory. */
  readonly tmpDir?: string;
  /** Called after each window, with rows written so far and the expected total. */
  readonly onProgress?: (rowsDone: number, rowsTotalEstimate: number) => void;
  readonly signal?: AbortSignal;
  /** Test hook: return true to make attempt `attempt` (0 = first) of window `windowIndex` fail. */
  readonly failWindows?: (windowIndex: number, attempt: number) => boolean;
  /** Rows per part file (tests use small values to exercise several parts per window). */
  readonly rowsPerPart?: number;
};

/** The artifact. */
export type GeneratedDataset = { path: string; rowCount: number; bytes: number; manifestHash: string };

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

/** Generates the dataset of `manifest` as one Parquet file at `outPath`. */
export async function generateDataset(options: GenerateDatasetOptions): Promise<GeneratedDataset> {
  const { manifest, jobId, outPath, signal } = options;
  signal?.throwIfAborted();
  const hash = manifestHash(manifest);
  const { driver, config } = manifest;
  const windows = planWindows(manifest.duration_seconds, driver.window_seconds);
  const estimate = estimateRows(config, manifest.duration_seconds * 1000);
  await mkdir(dirname(outPath), { recursive: true });
  const tmpRoot = options.tmpDir ?? tmpdir();
  await mkdir(tmpRoot, { recursive: true });
  const partDir = await mkdtemp(join(tmpRoot, 'generation-'));
  const tempPath = join(dirname(outPath), `.${basename(outPath)}.${randomUUID()}.tmp`);
  const runner = driver.multiprocess
    ? createWorkerPool(Math.min(driver.workers, windows.length))
    : createInProcessRunner();
  // Stops sibling windows (and backoff waits) once one window has failed for good.
  const stop = new AbortController();
  const onAbort = (): void => {
    stop.abort(signal?.reason);
    void runner.close();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const results = await runWindows(windows, runner, options, partDir, stop, estimate);
    // Free the workers' DuckDB instances before the merge needs its own memory.
    await runner.close();
    const rowCount = results.reduce((sum, r) => sum + r.rows, 0);
    signal?.throwIfAborted();
    await mergeParts(
      results.flatMap((r) => r.parts),
      tempPath,
      { job_id: jobId, manifest_hash: hash, row_count: rowCount },
      { threads: 1, tempDirectory: partDir },
      signal,
    );
    signal?.throwIfAborted();
    await rename(tempPath, outPath);
    options.onProgress?.(rowCount, rowCount);
    return { path: outPath, rowCount, bytes: (await stat(outPath)).size, manifestHash: hash };
  } catch (error) {
    await rm(tempPath, { force: true });
    throw signal?.aborted ? signal.reason : error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await runner.close();
    await rm(partDir, { recursive: true, force: true });
  }
}

/** Runs every window with `runner.concurrency` lanes; results are indexed by window. */
async function runWindows(
  windows: readonly GenerationWindow[],
  runner: WindowRunner,
  options: GenerateDatasetOptions,
  partDir: string,
  stop: AbortController,
  estimate: number,
): Promise<WindowResult[]> {
  const { config, driver } = options.manifest;
  const policy = { maxRetries: driver.max_retries, backoffSeconds: driver.backoff_seconds };
  const results: WindowResult[] = new Array(windows.length);
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
      results[window.index] = result;
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
  return results;
}
