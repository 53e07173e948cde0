/**
 * `npm run bench -- generate`: rows/s of dataset generation end to end (`generateDataset`) for a
 * 1-hour and a 24-hour BTC manifest, in-process and with 1, 2 and 4 worker threads, against DuckDB
 * writing the same rows pre-built (the writer's limit), in the same run; peak RSS of each case.
 * Goals (issue): 1 worker ≥ 0.8 × the writer's rate; 2 workers ≥ 1.6 × 1 worker.
 *
 * Every case runs in its own child process (`bench/lib/generate-case.ts`), so its peak RSS
 * (VmHWM) covers its worker threads and DuckDB's native memory and nothing else. Cases are
 * interleaved over `BENCH_REPS` rounds (the machine is shared and noisy) and summarised by their
 * median. `BENCH_SCALE` (default 1) scales both durations for a quick run.
 *
 * Multi-process cases (`procs_1`, `procs_2`, `bench/lib/generate-queue-case.ts`): one job queued
 * to 1 or 2 real `worker` processes (one window lane each) on a private nats-server, its windows
 * spread over them through the queue and stitched by the one that took the job. Peak RSS of
 * every case at both durations gives `peak_rss_flat_with_duration` (24 h ÷ 1 h).
 */
import { spawn } from 'node:child_process';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const CASE_TIMEOUT_MS = Number(process.env.BENCH_CASE_TIMEOUT_MS ?? 240_000);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CASE = fileURLToPath(new URL('./lib/generate-case.ts', import.meta.url));
const QUEUE_CASE = fileURLToPath(new URL('./lib/generate-queue-case.ts', import.meta.url));

type Row = Record<string, unknown>;
type E2eMode = 'inproc' | 'workers_1' | 'workers_2' | 'workers_4';
const MODES: readonly E2eMode[] = ['inproc', 'workers_1', 'workers_2', 'workers_4'];
type QueueMode = 'procs_1' | 'procs_2';
const QUEUE_MODES: readonly QueueMode[] = ['procs_1', 'procs_2'];
const VARIANTS = ['part_writer', 'duckdb_only'] as const;

const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;
const load = (): number[] => loadavg().map((x) => round(x, 2));
const log = (msg: string): void => {
  process.stderr.write(`generate: ${msg}\n`);
};

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const stats = (xs: readonly number[]) => ({
  median: Math.round(median(xs)),
  min: Math.round(Math.min(...xs)),
  max: Math.round(Math.max(...xs)),
  samples: xs.map((x) => Math.round(x)),
});

/** Runs one case in a child process; resolves with its JSON line (plus load and process wall). */
function runCase(args: readonly string[], exposeGc: boolean, script = CASE): Promise<Row> {
  const load1 = round(loadavg()[0] as number, 2);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...(exposeGc ? ['--expose-gc'] : []), '--import', 'tsx', script, ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      stdout += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), CASE_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line) {
        reject(new Error(`case ${args.join(' ')} failed (code ${code}, signal ${signal})`));
        return;
      }
      const row = JSON.parse(line) as Row;
      row.load1_at_start = load1;
      row.process_wall_s = round((performance.now() - t0) / 1000);
      resolve(row);
    });
  });
}

const e2eArgs = (duration: number, mode: E2eMode): string[] =>
  mode === 'inproc'
    ? ['e2e', String(duration), 'inproc', '1']
    : ['e2e', String(duration), 'workers', mode.slice(-1)];

function summarizeE2e(runs: readonly Row[]): Row {
  const rps = runs.map((r) => r.rows_per_s as number);
  // The run whose rate is the median (lower median for an even count) shows its phases.
  const sorted = [...runs].sort((a, b) => (a.rows_per_s as number) - (b.rows_per_s as number));
  const mid = sorted[Math.floor((sorted.length - 1) / 2)] as Row;
  return {
    rows: runs[0]?.rows,
    windows: runs[0]?.windows,
    workers_used:
      runs[0]?.driver && (runs[0].driver as { multiprocess: boolean }).multiprocess
        ? Math.min((runs[0].driver as { workers: number }).workers, runs[0].windows as number)
        : 0,
    rows_per_s: stats(rps),
    wall_s: runs.map((r) => r.wall_s),
    phases_s_of_median_run: mid.phases_s,
    cpu_cores_used: runs.map((r) => r.cpu_cores_used),
    machine_busy_cores: runs.map((r) => r.machine_busy_cores),
    other_processes_cores: runs.map((r) => r.other_processes_cores),
    rows_per_cpu_s: stats(runs.map((r) => r.rows_per_cpu_s as number)),
    peak_rss_mb: Math.max(...runs.map((r) => r.peak_rss_mb as number)),
    peak_rss_sampled_mb: Math.max(...runs.map((r) => r.peak_rss_sampled_mb as number)),
    rss_before_mb: runs.map((r) => r.rss_before_mb),
    output_bytes: runs[0]?.bytes,
    load1_at_start: runs.map((r) => r.load1_at_start),
  };
}

function summarizeQueue(runs: readonly Row[]): Row {
  return {
    rows: runs[0]?.rows,
    windows: runs[0]?.windows,
    worker_processes: runs[0]?.worker_processes,
    rows_per_s: stats(runs.map((r) => r.rows_per_s as number)),
    wall_s: runs.map((r) => r.wall_s),
    peak_rss_mb: Math.max(...runs.map((r) => r.peak_rss_mb as number)),
    peak_rss_mb_per_process: runs.map((r) => r.peak_rss_mb_per_process),
    output_bytes: runs[0]?.bytes,
    load1_at_start: runs.map((r) => r.load1_at_start),
  };
}

function summarizeWriter(runs: readonly Row[]): Row {
  const out: Row = { rows: (runs[0]?.part_writer as Row | undefined)?.rows, windows: runs[0]?.windows };
  for (const v of VARIANTS) {
    const rs = runs.map((r) => r[v] as Row);
    out[v] = {
      rows_per_s: stats(rs.map((r) => r.rows_per_s as number)),
      part_writing_rows_per_s: stats(rs.map((r) => r.part_writing_rows_per_s as number)),
      stitch_rows_per_s: stats(rs.map((r) => r.stitch_rows_per_s as number)),
      merge_rows_per_s: stats(rs.map((r) => r.merge_rows_per_s as number)),
      rows_per_s_with_old_merge: stats(rs.map((r) => r.rows_per_s_with_old_merge as number)),
      stitch_s: rs.map((r) => r.stitch_s),
      part_writing_s: rs.map((r) => r.part_writing_s),
      merge_s: rs.map((r) => r.merge_s),
      cpu_cores_used: rs.map((r) => r.cpu_cores_used),
      rows_per_cpu_s: stats(rs.map((r) => r.rows_per_cpu_s as number)),
      parts: rs[0]?.parts,
    };
  }
  out.peak_rss_mb = Math.max(...runs.map((r) => r.peak_rss_mb as number));
  out.load1_at_start = runs.map((r) => r.load1_at_start);
  return out;
}

export async function run(): Promise<unknown> {
  if (!(SCALE > 0) || !(REPS >= 1)) throw new Error('BENCH_SCALE must be > 0 and BENCH_REPS >= 1');
  const durations = { '1h': 3600, '24h': 86_400 } as const;
  type Label = keyof typeof durations;
  const labels = Object.keys(durations) as Label[];
  const seconds = (label: Label): number => Math.max(1, Math.round(durations[label] * SCALE));
  const loadStart = load();
  const t0 = performance.now();
  const writerRuns: Record<Label, Row[]> = { '1h': [], '24h': [] };
  const e2eRuns: Record<Label, Record<E2eMode, Row[]>> = {
    '1h': { inproc: [], workers_1: [], workers_2: [], workers_4: [] },
    '24h': { inproc: [], workers_1: [], workers_2: [], workers_4: [] },
  };
  const queueRuns: Record<Label, Record<QueueMode, Row[]>> = {
    '1h': { procs_1: [], procs_2: [] },
    '24h': { procs_1: [], procs_2: [] },
  };

  for (let rep = 0; rep < REPS; rep++) {
    for (const label of labels) {
      const d = seconds(label);
      log(`round ${rep + 1}/${REPS}, ${label} (${d} s): writer`);
      writerRuns[label].push(await runCase(['writer', String(d)], true));
      // Rotate the order of the end-to-end cases from round to round, so drift spreads evenly.
      for (let i = 0; i < MODES.length; i++) {
        const mode = MODES[(i + rep) % MODES.length] as E2eMode;
        log(`round ${rep + 1}/${REPS}, ${label} (${d} s): end to end, ${mode}`);
        e2eRuns[label][mode].push(await runCase(e2eArgs(d, mode), false));
      }
      for (let i = 0; i < QUEUE_MODES.length; i++) {
        const mode = QUEUE_MODES[(i + rep) % QUEUE_MODES.length] as QueueMode;
        log(`round ${rep + 1}/${REPS}, ${label} (${d} s): worker processes, ${mode}`);
        queueRuns[label][mode].push(await runCase([String(d), mode.slice(-1)], false, QUEUE_CASE));
      }
    }
  }

  const results: Row = {};
  const ratios: Row = {};
  for (const label of labels) {
    const writer = summarizeWriter(writerRuns[label]);
    const e2e = Object.fromEntries(MODES.map((m) => [m, summarizeE2e(e2eRuns[label][m])])) as Record<
      E2eMode,
      Row
    >;
    const rowsOk = MODES.every((m) => e2eRuns[label][m].every((r) => r.rows === writer.rows));
    const queue = Object.fromEntries(
      QUEUE_MODES.map((m) => [m, summarizeQueue(queueRuns[label][m])]),
    ) as Record<QueueMode, Row>;
    const queueRowsOk = QUEUE_MODES.every((m) => queueRuns[label][m].every((r) => r.rows === writer.rows));
    results[label] = {
      duration_seconds: seconds(label),
      rows_identical_everywhere: rowsOk && queueRowsOk,
      writer,
      end_to_end: e2e,
      worker_processes: queue,
    };
    const med = (row: Row, key = 'rows_per_s'): number => (row[key] as { median: number }).median;
    const w1 = med(e2e.workers_1);
    const w2 = med(e2e.workers_2);
    const w4 = med(e2e.workers_4);
    const writerDuckdb = writer.duckdb_only as Row;
    const duckdbRate = med(writer.duckdb_only as Row);
    const partWriterRate = med(writer.part_writer as Row);
    // Amdahl ceiling for 2 workers from the 1-worker median run: windows split in two, the
    // single-threaded merge (and pool close) does not.
    const phases = e2e.workers_1.phases_s_of_median_run as {
      windows_done: number;
      close_stitch_store: number;
    };
    const inprocPhases = e2e.inproc.phases_s_of_median_run as { first_window_done: number };
    const first1 = (e2e.workers_1.phases_s_of_median_run as { first_window_done: number }).first_window_done;
    const windows = e2e.workers_2.windows as number;
    const ceiling =
      windows >= 2 && phases.windows_done !== null
        ? round(
            (phases.windows_done + phases.close_stitch_store) /
              (phases.windows_done / 2 + phases.close_stitch_store),
            2,
          )
        : 1;
    ratios[label] = {
      workers_1_vs_writer: {
        ratio: round(w1 / duckdbRate, 2),
        goal: 0.8,
        goal_met: w1 / duckdbRate >= 0.8,
        workers_1_rows_per_s: w1,
        writer_rows_per_s: duckdbRate,
        writer: 'duckdb_only (pre-built EventColumns batches → ZSTD parts + stitch)',
        cpu_ratio: round(
          med(e2e.workers_1, 'rows_per_cpu_s') / med(writer.duckdb_only as Row, 'rows_per_cpu_s'),
          2,
        ),
        cpu_ratio_note: 'rows per CPU-second (all threads), less sensitive to other processes on the machine',
      },
      workers_1_vs_part_writer: {
        ratio: round(w1 / partWriterRate, 2),
        goal: 0.8,
        goal_met: w1 / partWriterRate >= 0.8,
        part_writer_rows_per_s: partWriterRate,
        writer: 'part_writer (ParquetPartWriter.write over pre-built MarketEvent[] → parts + stitch)',
      },
      workers_2_vs_workers_1: {
        ratio: round(w2 / w1, 2),
        goal: 1.6,
        goal_met: w2 / w1 >= 1.6,
        workers_2_rows_per_s: w2,
        windows,
        amdahl_ceiling_from_1_worker_phases: ceiling,
        cpu_cores_used_median: {
          workers_1: median(e2e.workers_1.cpu_cores_used as number[]),
          workers_2: median(e2e.workers_2.cpu_cores_used as number[]),
        },
        other_processes_cores_median: median(e2e.workers_2.other_processes_cores as number[]),
        ...(windows < 2 ? { note: 'one window: the pool uses min(workers, windows) = 1 worker' } : {}),
      },
      workers_4_vs_workers_1: {
        ratio: round(w4 / w1, 2),
        workers_4_rows_per_s: w4,
        cpu_cores_used_median: median(e2e.workers_4.cpu_cores_used as number[]),
        note: 'a 2-core machine: beyond 2 workers the threads share the cores',
      },
      stitch_vs_old_merge: {
        speedup: round(med(writerDuckdb, 'stitch_rows_per_s') / med(writerDuckdb, 'merge_rows_per_s'), 1),
        stitch_rows_per_s: med(writerDuckdb, 'stitch_rows_per_s'),
        merge_rows_per_s: med(writerDuckdb, 'merge_rows_per_s'),
        stitch_s: writerDuckdb.stitch_s,
        merge_s: writerDuckdb.merge_s,
        writer_rows_per_s_with_stitch: duckdbRate,
        writer_rows_per_s_with_old_merge: med(writerDuckdb, 'rows_per_s_with_old_merge'),
      },
      procs_2_vs_procs_1: {
        ratio: round(med(queue.procs_2) / med(queue.procs_1), 2),
        goal: 1.6,
        procs_1_rows_per_s: med(queue.procs_1),
        procs_2_rows_per_s: med(queue.procs_2),
        windows: queue.procs_2.windows,
        note: 'windows over 2 worker processes through the JOBS queue, parts via the local store, one stitch',
      },
      procs_1_vs_workers_1: round(med(queue.procs_1) / w1, 2),
      workers_2_reaches_1M_rows_per_s: w2 >= 1_000_000,
      inproc_vs_workers_1: round(med(e2e.inproc) / w1, 2),
      worker_start_overhead_s_est: round(first1 - inprocPhases.first_window_done, 2),
    };
  }

  type Summary = { end_to_end: Record<E2eMode, Row>; worker_processes: Record<QueueMode, Row> };
  const long = results['24h'] as Summary;
  const short = results['1h'] as Summary;
  const peakOf = (r: Summary, m: E2eMode | QueueMode): number =>
    ((m in r.end_to_end ? r.end_to_end[m as E2eMode] : r.worker_processes[m as QueueMode]) as Row)
      .peak_rss_mb as number;
  const rssFlat = Object.fromEntries(
    [...MODES, ...QUEUE_MODES].map((m) => [
      m,
      {
        '1h_mb': peakOf(short, m),
        '24h_mb': peakOf(long, m),
        ratio: round(peakOf(long, m) / peakOf(short, m), 2),
      },
    ]),
  );
  return {
    benchmark: 'generate',
    goals:
      '1 worker ≥ 0.8 × writer rows/s; 2 workers ≥ 1.6 × 1 worker; 4 workers on 2 cores; stitch vs the old DuckDB merge; peak RSS of 24 h',
    scale: SCALE,
    reps: REPS,
    durations_seconds: Object.fromEntries(labels.map((l) => [l, seconds(l)])),
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model,
      total_mem_mb: Math.round(totalmem() / 1_048_576),
      node: process.version,
      tmpdir: tmpdir(),
    },
    load_avg_start: loadStart,
    load_avg_end: load(),
    bench_wall_s: round((performance.now() - t0) / 1000, 1),
    method: {
      end_to_end:
        'generateDataset with normalizeManifest({config: {symbol: "BTC"}, duration_seconds, driver: {multiprocess: true, workers: 1|2} or {multiprocess: false}}) (window_seconds 3600 by default), to a temp dir removed afterwards; rows/s = rowCount / wall of the call (pool start, windows, merge, rename). Each run in a fresh child process after an untimed 60 s in-process warm-up of the main thread; worker threads start cold, as in every job.',
      writer:
        'Same rows (eventsBetween per window, same windows), pre-built before each timed section; timed = writing them to ZSTD part files + the stitch, as the generation does; rows/s = rows / (part writing + stitch); the same parts are then merged with the old DuckDB merge (ZSTD, 1 thread) for stitch_vs_old_merge. Per window, the rows are built untimed, then its write is timed, and the times are summed: the 24 h rows are never all in memory (about 76 MB of event objects per hour). part_writer = ParquetPartWriter.write over a MarketEvent[] (the generation writer as is, incl. JS columnarization and its event-loop yields); duckdb_only = pre-built EventColumns batches → DataChunk → appender → COPY (DuckDB alone). After an untimed 60 s warm-up; --expose-gc, gc() before each timed window.',
      ratios:
        'medians over reps; the goal ratio uses duckdb_only (DuckDB alone on pre-built batches); part_writer also charges the writer with the JS columnarization of event objects',
      worker_start_overhead_s_est:
        'first_window_done of 1 worker minus that of in-process (median runs): worker thread start, tsx registration and transpile in the worker, DuckDB open',
      peak_rss:
        'VmHWM of the case process (all threads, DuckDB native memory), reset after warm-up via /proc/self/clear_refs when allowed; peak_rss_sampled_mb = max of process.memoryUsage.rss() every 50 ms',
      contention:
        'cpu_cores_used = CPU of the case process (all threads) / wall; machine_busy_cores from /proc/stat over the timed run; other_processes_cores = machine busy minus this case (other users of the shared machine)',
      phases:
        'of the run with the median rate (the lower middle one for an even count), from onProgress timestamps: first_window_done, windows_done (last window), close_stitch_store (pool close + stitch into the local store)',
    },
    results,
    ratios,
    peak_rss_24h_mb: Object.fromEntries(MODES.map((m) => [m, long.end_to_end[m].peak_rss_mb])),
    peak_rss_flat_with_duration: rssFlat,
  };
}
