/**
 * One case of `bench/generate.ts`, in its own process so that its peak RSS (VmHWM, which covers
 * worker threads and DuckDB's native memory) belongs to that case alone. Prints one JSON line on
 * stdout; progress goes to stderr.
 *
 *   node --import tsx bench/lib/generate-case.ts e2e <duration_s> <inproc|workers> <workers>
 *   node --expose-gc --import tsx bench/lib/generate-case.ts writer <duration_s>
 *
 * e2e: `generateDataset` of `{config: {symbol: 'BTC'}, duration_seconds, driver}` into a temp dir
 * (removed afterwards), after an untimed 60 s in-process warm-up (a server's main thread is warm).
 * With workers, on one pool (`createWorkerPool(workers)`) as a running service has it: the pool's
 * first job is timed on its own (`cold_first_job`: its threads start inside it), then an untimed
 * 60 s job, then the timed job on the same warm threads (the row's main figures). The peak is
 * reset before the timed warm job when the kernel allows it (`/proc/self/clear_refs` ← 5).
 *
 * writer: the same rows, window by window, pre-built before each timed section (never the whole
 * dataset in memory at once), then written the way the generation writes them:
 *   - `part_writer`: `ParquetPartWriter.write` over a pre-built `MarketEvent[]` (its own code path:
 *     columnarization in JS, DataChunks, staging table, COPY to LZ4 parts; minus the simulation).
 *   - `duckdb_only`: pre-built `EventColumns` batches → DataChunk → appender → COPY, the writer's
 *     loop without `EventColumns.append` and without the event-loop yields: DuckDB's own limit.
 *   Each variant then stitches its parts (ZSTD, as `generateDataset`), and, for comparison, merges
 *   them with the DuckDB merge the generation used before (`duckdb-merge.ts`, ZSTD, one thread).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { DuckDBAppender } from '@duckdb/node-api';
import {
  createStagingChunk,
  fillStagingChunk,
  VECTOR_SIZE,
} from '../../consumers/generation/chunk-writer.ts';
import { EventColumns } from '../../consumers/generation/event-columns.ts';
import { generateDataset, kvStrings } from '../../consumers/generation/generate.ts';
import {
  projectionSql,
  STAGING_TABLE,
  sqlString,
  stagingTableSql,
} from '../../consumers/generation/layout.ts';
import {
  DEFAULT_ROWS_PER_PART,
  openDuckDB,
  ParquetPartWriter,
  ROW_GROUP_SIZE,
} from '../../consumers/generation/part-writer.ts';
import { localPart, planStitch, stitchBytes } from '../../consumers/generation/stitch.ts';
import { partPath } from '../../consumers/generation/window-task.ts';
import { planWindows } from '../../consumers/generation/windows.ts';
import { createWorkerPool, type WorkerPool } from '../../consumers/generation/worker-pool.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { manifestHash, normalizeManifest, type SimulationManifest } from '../../contracts/manifest.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';
import { eventsBetween } from '../../producers/simulator/market.ts';
import { mergeParts } from './duckdb-merge.ts';

const log = (msg: string): void => {
  process.stderr.write(`generate-case[${process.pid}]: ${msg}\n`);
};
const MB = 1_048_576;
const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;
const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

/** Peak RSS of this process (all threads), MB, from /proc; null where there is no /proc. */
async function vmHwmMb(): Promise<number | null> {
  try {
    const status = await readFile('/proc/self/status', 'utf8');
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
    return kb ? round(Number(kb) / 1024, 1) : null;
  } catch {
    return null;
  }
}

/** Resets VmHWM to the current RSS (Linux ≥ 4.0); false when not allowed. */
async function resetPeak(): Promise<boolean> {
  try {
    await writeFile('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

/** Jiffies of the whole machine from /proc/stat: busy and total (all CPUs); null without /proc. */
async function machineCpu(): Promise<{ busy: number; total: number } | null> {
  try {
    const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0] as string;
    const v = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

/** Cores the machine kept busy between two `machineCpu` snapshots. */
const busyCores = (
  a: { busy: number; total: number } | null,
  b: { busy: number; total: number } | null,
): number | null =>
  a && b && b.total > a.total ? round(((b.busy - a.busy) / (b.total - a.total)) * cpus().length, 2) : null;

/** Samples RSS every 50 ms (the main thread may be late while it generates in-process). */
function rssSampler(): { stop: () => number } {
  let max = process.memoryUsage.rss();
  const timer = setInterval(() => {
    max = Math.max(max, process.memoryUsage.rss());
  }, 50);
  return {
    stop: () => {
      clearInterval(timer);
      return round(Math.max(max, process.memoryUsage.rss()) / MB, 1);
    },
  };
}

const manifestFor = (durationSeconds: number, driver: Record<string, unknown>): SimulationManifest =>
  normalizeManifest({ config: { symbol: 'BTC' }, duration_seconds: durationSeconds, driver }).manifest;

/** CPU, wall and phases of one timed `generateDataset` call (on `pool` when given). */
async function timedJob(
  manifest: SimulationManifest,
  dir: string,
  name: string,
  pool: WorkerPool | null,
): Promise<Record<string, unknown>> {
  const progress: number[] = [];
  const machine0 = await machineCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await generateDataset({
    manifest,
    jobId: 'bench-generate',
    outPath: join(dir, `${name}.parquet`),
    tmpDir: dir,
    onProgress: () => progress.push(performance.now() - t0),
    ...(pool ? { pool } : {}),
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const machineBusy = busyCores(machine0, await machineCpu());
  await rm(join(dir, `${name}.parquet`), { force: true });
  // onProgress: once per window (in completion order), then once after the stitch + rename.
  const windowsDoneMs = progress.length >= 2 ? (progress[progress.length - 2] as number) : null;
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return {
    rows: result.rowCount,
    bytes: result.bytes,
    wall_s: round(wallMs / 1000),
    rows_per_s: Math.round(result.rowCount / (wallMs / 1000)),
    phases_s: {
      first_window_done: progress.length >= 2 ? round((progress[0] as number) / 1000) : null,
      windows_done: windowsDoneMs === null ? null : round(windowsDoneMs / 1000),
      close_stitch_store: windowsDoneMs === null ? null : round((wallMs - windowsDoneMs) / 1000),
    },
    cpu_s: round(cpuS),
    cpu_cores_used: round(cpuS / (wallMs / 1000), 2),
    rows_per_cpu_s: Math.round(result.rowCount / cpuS),
    machine_busy_cores: machineBusy,
    other_processes_cores:
      machineBusy === null ? null : Math.max(0, round(machineBusy - cpuS / (wallMs / 1000), 2)),
    load1: round(loadavg()[0] as number, 2),
  };
}

/**
 * Workers: the pool's first job, timed (its threads start inside it: `cold_first_job`); then an
 * untimed 60 s job and the timed job on the same, now warm threads, as a running service has them.
 */
async function e2e(durationSeconds: number, mode: string, workers: number): Promise<Record<string, unknown>> {
  const driver = mode === 'inproc' ? { multiprocess: false } : { multiprocess: true, workers };
  const manifest = manifestFor(durationSeconds, driver);
  const dir = await mkdtemp(join(tmpdir(), 'bench-generate-'));
  const pool = mode === 'inproc' ? null : createWorkerPool(workers);
  try {
    // Warm the main thread (simulator, writer, stitch code paths); untimed.
    await generateDataset({
      manifest: manifestFor(60, { multiprocess: false }),
      jobId: 'bench-warmup',
      outPath: join(dir, 'warmup.parquet'),
      tmpDir: dir,
    });
    await rm(join(dir, 'warmup.parquet'), { force: true });
    let cold: Record<string, unknown> | null = null;
    if (pool) {
      log(`e2e ${durationSeconds} s ${JSON.stringify(manifest.driver)}: cold first job`);
      gc();
      cold = await timedJob(manifest, dir, 'cold', pool);
      await generateDataset({
        manifest: manifestFor(60, driver),
        jobId: 'bench-warmup',
        outPath: join(dir, 'warmup.parquet'),
        tmpDir: dir,
        pool,
      });
      await rm(join(dir, 'warmup.parquet'), { force: true });
    }
    gc();
    const peakReset = await resetPeak();
    const rssBefore = round(process.memoryUsage.rss() / MB, 1);
    const sampler = rssSampler();
    log(`e2e ${durationSeconds} s ${JSON.stringify(manifest.driver)}${pool ? ': warm' : ''}`);
    const threadsBefore = pool?.threads();
    const timed = await timedJob(manifest, dir, 'out', pool);
    const sampledPeak = sampler.stop();
    const threadsAfter = pool?.threads();
    return {
      kind: 'e2e',
      duration_seconds: durationSeconds,
      driver: manifest.driver,
      windows: planWindows(durationSeconds, manifest.driver.window_seconds).length,
      ...timed,
      cold_first_job: cold,
      threads_reused: pool ? JSON.stringify(threadsBefore) === JSON.stringify(threadsAfter) : null,
      rss_before_mb: rssBefore,
      peak_rss_mb: await vmHwmMb(),
      peak_rss_sampled_mb: sampledPeak,
      peak_reset_after_warmup: peakReset,
      manifest_hash: manifestHash(manifest),
    };
  } finally {
    await pool?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

type Timed = { rows: number; parts: string[]; partMs: number; partCpuMs: number };

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
};

/** `ParquetPartWriter.write` over pre-built event arrays, window by window. */
async function partWriterVariant(manifest: SimulationManifest, dir: string): Promise<Timed> {
  const { config } = manifest;
  const windows = planWindows(manifest.duration_seconds, manifest.driver.window_seconds);
  let partMs = 0;
  let partCpuMs = 0;
  let rows = 0;
  const parts: string[] = [];
  let t = performance.now();
  let c = process.cpuUsage();
  const writer = await ParquetPartWriter.open({ threads: 1 });
  partMs += performance.now() - t;
  partCpuMs += cpuMs(c);
  for (const window of windows) {
    const events: MarketEvent[] = [...eventsBetween(config, window.fromMs, window.toMs)];
    gc();
    t = performance.now();
    c = process.cpuUsage();
    const result = await writer.write({
      events,
      constants: { symbol: config.symbol, source: 'synthetic' },
      partPath: (segment) => partPath(dir, window.index, segment),
      levelsHint: config.book_depth,
    });
    partMs += performance.now() - t;
    partCpuMs += cpuMs(c);
    rows += result.rows;
    parts.push(...result.parts);
  }
  t = performance.now();
  c = process.cpuUsage();
  writer.close();
  partMs += performance.now() - t;
  partCpuMs += cpuMs(c);
  return { rows, parts, partMs, partCpuMs };
}

/** Pre-built `EventColumns` batches → DataChunks → staging table → COPY: the writer's inner loop. */
async function duckdbOnlyVariant(manifest: SimulationManifest, dir: string): Promise<Timed> {
  const { config } = manifest;
  const constants = { symbol: config.symbol, source: 'synthetic' } as const;
  const windows = planWindows(manifest.duration_seconds, manifest.driver.window_seconds);
  const select = projectionSql(constants.symbol, constants.source);
  let partMs = 0;
  let partCpuMs = 0;
  let rows = 0;
  const parts: string[] = [];
  let t = performance.now();
  let c = process.cpuUsage();
  const instance = await openDuckDB({ threads: 1 });
  const connection = await instance.connect();
  const chunk = createStagingChunk();
  partMs += performance.now() - t;
  partCpuMs += cpuMs(c);
  const resetStaging = async (): Promise<DuckDBAppender> => {
    await connection.run(stagingTableSql());
    return connection.createAppender(STAGING_TABLE);
  };
  for (const window of windows) {
    const batches: EventColumns[] = [];
    let batch = new EventColumns(constants, VECTOR_SIZE, config.book_depth);
    for (const event of eventsBetween(config, window.fromMs, window.toMs)) {
      batch.append(event);
      if (batch.full) {
        batches.push(batch);
        batch = new EventColumns(constants, VECTOR_SIZE, config.book_depth);
      }
    }
    if (batch.length > 0) batches.push(batch);
    gc();
    t = performance.now();
    c = process.cpuUsage();
    let appender = await resetStaging();
    let staged = 0;
    const writePart = async (): Promise<void> => {
      appender.closeSync();
      const path = partPath(dir, window.index, parts.length);
      await connection.run(
        `COPY (${select}) TO ${sqlString(path)} (FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
      );
      parts.push(path);
      staged = 0;
    };
    for (const b of batches) {
      fillStagingChunk(chunk, b);
      appender.appendDataChunk(chunk);
      staged += b.length;
      rows += b.length;
      if (staged >= DEFAULT_ROWS_PER_PART) {
        await writePart();
        appender = await resetStaging();
      }
    }
    if (staged > 0) await writePart();
    else appender.closeSync();
    partMs += performance.now() - t;
    partCpuMs += cpuMs(c);
  }
  t = performance.now();
  c = process.cpuUsage();
  connection.closeSync();
  instance.closeSync();
  partMs += performance.now() - t;
  partCpuMs += cpuMs(c);
  return { rows, parts, partMs, partCpuMs };
}

async function writer(durationSeconds: number): Promise<Record<string, unknown>> {
  const manifest = manifestFor(durationSeconds, {});
  const root = await mkdtemp(join(tmpdir(), 'bench-generate-writer-'));
  const out: Record<string, unknown> = {
    kind: 'writer',
    duration_seconds: durationSeconds,
    windows: planWindows(durationSeconds, manifest.driver.window_seconds).length,
    gc_between_windows: typeof (globalThis as { gc?: unknown }).gc === 'function',
  };
  try {
    // Warm-up (untimed): 60 s of rows through both variants.
    const warm = manifestFor(60, {});
    for (const variant of [partWriterVariant, duckdbOnlyVariant]) {
      const d = await mkdtemp(join(root, 'warm-'));
      await variant(warm, d);
      await rm(d, { recursive: true, force: true });
    }
    gc();
    const peakReset = await resetPeak();
    const sampler = rssSampler();
    for (const [name, variant] of [
      ['part_writer', partWriterVariant],
      ['duckdb_only', duckdbOnlyVariant],
    ] as const) {
      log(`writer ${durationSeconds} s ${name}`);
      const d = await mkdtemp(join(root, `${name}-`));
      const timed = await variant(manifest, d);
      const metadata = {
        job_id: 'bench-generate',
        manifest_hash: manifestHash(manifest),
        row_count: timed.rows,
      };
      let t = performance.now();
      let c = process.cpuUsage();
      const parts = await Promise.all(timed.parts.map(localPart));
      const plan = planStitch(parts, kvStrings(metadata));
      const stitchedBytes = await new LocalArtifactStore(d).put('stitched.parquet', stitchBytes(parts, plan));
      const stitchMs = performance.now() - t;
      const stitchCpuMs = cpuMs(c);
      t = performance.now();
      c = process.cpuUsage();
      const mergedPath = join(d, 'merged.parquet');
      await mergeParts(timed.parts, mergedPath, metadata, { threads: 1, tempDirectory: d });
      const mergeMs = performance.now() - t;
      const mergeCpuMs = cpuMs(c);
      const totalS = (timed.partMs + stitchMs) / 1000;
      const cpuS = (timed.partCpuMs + stitchCpuMs) / 1000;
      out[name] = {
        rows: timed.rows,
        parts: timed.parts.length,
        bytes: stitchedBytes,
        merged_bytes: (await stat(mergedPath)).size,
        part_writing_s: round(timed.partMs / 1000),
        stitch_s: round(stitchMs / 1000),
        merge_s: round(mergeMs / 1000),
        total_s: round(totalS),
        rows_per_s: Math.round(timed.rows / totalS),
        rows_per_s_with_old_merge: Math.round(timed.rows / ((timed.partMs + mergeMs) / 1000)),
        part_writing_rows_per_s: Math.round(timed.rows / (timed.partMs / 1000)),
        stitch_rows_per_s: Math.round(timed.rows / (stitchMs / 1000)),
        merge_rows_per_s: Math.round(timed.rows / (mergeMs / 1000)),
        merge_cpu_s: round(mergeCpuMs / 1000),
        cpu_s: round(cpuS),
        rows_per_cpu_s: Math.round(timed.rows / cpuS),
        cpu_cores_used: round(cpuS / totalS, 2),
      };
      await rm(d, { recursive: true, force: true });
      gc();
    }
    out.peak_rss_mb = await vmHwmMb();
    out.peak_rss_sampled_mb = sampler.stop();
    out.peak_reset_after_warmup = peakReset;
    return out;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [kind, duration, mode, workers] = process.argv.slice(2);
  const durationSeconds = Number(duration);
  if (!Number.isInteger(durationSeconds) || durationSeconds < 1) throw new Error(`bad duration ${duration}`);
  let result: Record<string, unknown>;
  if (kind === 'e2e') result = await e2e(durationSeconds, mode ?? 'workers', Number(workers ?? 1));
  else if (kind === 'writer') result = await writer(durationSeconds);
  else throw new Error(`unknown case kind ${kind}`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
