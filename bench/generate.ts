/**
 * `npm run bench -- generate`: rows/s of dataset generation end to end (`generateDataset`) for a
 * 1-hour and a 24-hour BTC manifest, in-process and with 1, 2 and 4 worker threads, against DuckDB
 * writing the same rows pre-built (the writer's limit), in the same run; peak RSS of each case.
 * Goals (issue): 1 worker ≥ 0.8 × the writer's rate; 2 workers ≥ 1.6 × 1 worker, on warm worker
 * threads (a pool reused by every job, as a worker process has it); each case also reports its
 * pool's cold first job.
 *
 * Every case runs in its own child process (`bench/lib/generate-case.ts`), so its peak RSS
 * (VmHWM) covers its worker threads and DuckDB's native memory and nothing else. Cases are
 * interleaved over `BENCH_REPS` rounds (the machine is shared and noisy) and summarised by their
 * median. `BENCH_SCALE` (default 1) scales both durations for a quick run.
 *
 * Multi-process cases (`procs_1`, `procs_2`, `bench/lib/generate-queue-case.ts`): one job queued
 * to 1 or 2 real `worker` processes (one window lane each) on a private nats-server, its windows
 * spread over them through the queue and stitched by the one that took the job.
 *
 * Peak RSS against duration: the end-to-end cases also run at 6 h and 12 h, so
 * `peak_rss_flat_with_duration` compares 6, 12 and 24 h (several windows each; the 1 h run is a
 * single shorter window). A case that fails or outlives `BENCH_CASE_TIMEOUT_MS` (default 900 s)
 * is listed in `failed_cases` and left out of the medians instead of ending the run.
 * `BENCH_GENERATE_RAW=<file>` appends each case's row to a file as it ends;
 * `BENCH_GENERATE_FROM_RAW=<file>` summarises such a file without running anything.
 */
import { spawn } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const REPS = Number(process.env.BENCH_REPS ?? 3);
const RAW = process.env.BENCH_GENERATE_RAW;
const FROM_RAW = process.env.BENCH_GENERATE_FROM_RAW;
const CASE_TIMEOUT_MS = Number(process.env.BENCH_CASE_TIMEOUT_MS ?? 900_000);
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

const stats = (xs: readonly number[]) =>
  xs.length === 0
    ? null
    : {
        median: Math.round(median(xs)),
        min: Math.round(Math.min(...xs)),
        max: Math.round(Math.max(...xs)),
        samples: xs.map((x) => Math.round(x)),
      };

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
  if (runs.length === 0) return { runs: 0 };
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
    load1_at_end: runs.map((r) => r.load1),
    threads_reused: runs.map((r) => r.threads_reused),
    cold_first_job: summarizeCold(runs.map((r) => r.cold_first_job as Row | null)),
  };
}

/** The pool's first job of each run (threads started inside it); null in-process. */
function summarizeCold(colds: readonly (Row | null)[]): Row | null {
  const rows = colds.filter((c): c is Row => c !== null);
  if (rows.length === 0) return null;
  return {
    rows_per_s: stats(rows.map((r) => r.rows_per_s as number)),
    wall_s: rows.map((r) => r.wall_s),
    first_window_done_s: rows.map((r) => (r.phases_s as Row).first_window_done),
    cpu_cores_used: rows.map((r) => r.cpu_cores_used),
    rows_per_cpu_s: stats(rows.map((r) => r.rows_per_cpu_s as number)),
  };
}

function summarizeQueue(runs: readonly Row[]): Row {
  if (runs.length === 0) return { runs: 0 };
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
  if (runs.length === 0) return { runs: 0 };
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
  const durations = { '1h': 3600, '6h': 21_600, '12h': 43_200, '24h': 86_400 } as const;
  type Label = keyof typeof durations;
  // Every case at 1 h and 24 h; the end-to-end cases also at 6 h and 12 h, for peak RSS against
  // duration (1 h is a single, shorter window, so it says nothing about flatness).
  const labels: Label[] = ['1h', '24h'];
  const rssLabels: Label[] = ['6h', '12h'];
  const seconds = (label: Label): number => Math.max(1, Math.round(durations[label] * SCALE));
  const loadStart = load();
  const t0 = performance.now();
  const failures: Row[] = [];
  /** A case that fails (or times out on a saturated machine) is reported and left out, not fatal. */
  const attempt = async (into: Row[], args: readonly string[], exposeGc: boolean, script?: string) => {
    try {
      const row = await runCase(args, exposeGc, script);
      into.push(row);
      // Each case's row as it ends (BENCH_GENERATE_RAW=<file>): a long run's data survives it.
      if (RAW) await appendFile(RAW, `${JSON.stringify({ args, row })}\n`);
    } catch (error) {
      log(`case failed: ${error instanceof Error ? error.message : String(error)}`);
      failures.push({ args: args.join(' '), error: String(error), load1: load()[0] });
    }
  };
  const emptyE2e = (): Record<E2eMode, Row[]> => ({
    inproc: [],
    workers_1: [],
    workers_2: [],
    workers_4: [],
  });
  const writerRuns: Record<string, Row[]> = { '1h': [], '24h': [] };
  const e2eRuns: Record<string, Record<E2eMode, Row[]>> = {
    '1h': emptyE2e(),
    '6h': emptyE2e(),
    '12h': emptyE2e(),
    '24h': emptyE2e(),
  };
  const queueRuns: Record<string, Record<QueueMode, Row[]>> = {
    '1h': { procs_1: [], procs_2: [] },
    '24h': { procs_1: [], procs_2: [] },
  };

  // BENCH_GENERATE_FROM_RAW=<file>: summarise the rows a run saved (BENCH_GENERATE_RAW) instead
  // of running the cases again, e.g. after a run on a saturated machine was stopped.
  const labelOf = (d: string): string | undefined =>
    [...labels, ...rssLabels].find((l) => String(seconds(l)) === d);
  for (const line of FROM_RAW ? (await readFile(FROM_RAW, 'utf8')).split('\n').filter(Boolean) : []) {
    const { args, row } = JSON.parse(line) as { args: string[]; row: Row };
    const [a, b, c, n] = args;
    if (a === 'writer') writerRuns[labelOf(b as string) ?? '']?.push(row);
    else if (a === 'e2e') {
      const mode = (c === 'inproc' ? 'inproc' : `workers_${n}`) as E2eMode;
      e2eRuns[labelOf(b as string) ?? '']?.[mode]?.push(row);
    } else queueRuns[labelOf(a as string) ?? '']?.[`procs_${b}` as QueueMode]?.push(row);
  }
  for (let rep = 0; rep < (FROM_RAW ? 0 : REPS); rep++) {
    for (const label of [...labels, ...rssLabels]) {
      const d = seconds(label);
      const full = labels.includes(label);
      if (full) {
        log(`round ${rep + 1}/${REPS}, ${label} (${d} s): writer`);
        await attempt(writerRuns[label] as Row[], ['writer', String(d)], true);
      }
      // Rotate the order of the end-to-end cases from round to round, so drift spreads evenly.
      for (let i = 0; i < MODES.length; i++) {
        const mode = MODES[(i + rep) % MODES.length] as E2eMode;
        log(`round ${rep + 1}/${REPS}, ${label} (${d} s): end to end, ${mode}`);
        await attempt((e2eRuns[label] as Record<E2eMode, Row[]>)[mode], e2eArgs(d, mode), false);
      }
      if (!full) continue;
      for (let i = 0; i < QUEUE_MODES.length; i++) {
        const mode = QUEUE_MODES[(i + rep) % QUEUE_MODES.length] as QueueMode;
        log(`round ${rep + 1}/${REPS}, ${label} (${d} s): worker processes, ${mode}`);
        await attempt(
          (queueRuns[label] as Record<QueueMode, Row[]>)[mode],
          [String(d), mode.slice(-1)],
          false,
          QUEUE_CASE,
        );
      }
    }
  }

  const results: Row = {};
  const ratios: Row = {};
  for (const label of labels) {
    const writerRows = writerRuns[label] as Row[];
    const e2eRows = e2eRuns[label] as Record<E2eMode, Row[]>;
    const queueRows = queueRuns[label] as Record<QueueMode, Row[]>;
    const writer = summarizeWriter(writerRows);
    const e2e = Object.fromEntries(MODES.map((m) => [m, summarizeE2e(e2eRows[m])])) as Record<E2eMode, Row>;
    const rowsOk = MODES.every((m) => e2eRows[m].every((r) => r.rows === writer.rows));
    const queue = Object.fromEntries(QUEUE_MODES.map((m) => [m, summarizeQueue(queueRows[m])])) as Record<
      QueueMode,
      Row
    >;
    const queueRowsOk = QUEUE_MODES.every((m) => queueRows[m].every((r) => r.rows === writer.rows));
    results[label] = {
      duration_seconds: seconds(label),
      rows_identical_everywhere: rowsOk && queueRowsOk,
      writer,
      end_to_end: e2e,
      worker_processes: queue,
    };
    const med = (row: Row | undefined, key = 'rows_per_s'): number =>
      (row?.[key] as { median: number } | null | undefined)?.median ?? Number.NaN;
    const w1 = med(e2e.workers_1);
    const w2 = med(e2e.workers_2);
    const w4 = med(e2e.workers_4);
    const writerDuckdb = (writer.duckdb_only as Row | undefined) ?? {};
    const duckdbRate = med(writer.duckdb_only as Row);
    const partWriterRate = med(writer.part_writer as Row);
    // Amdahl ceiling for 2 workers from the 1-worker median run: windows split in two, the
    // single-threaded merge (and pool close) does not.
    type Phases = { first_window_done: number; windows_done: number | null; close_stitch_store: number };
    const none: Phases = { first_window_done: Number.NaN, windows_done: null, close_stitch_store: 0 };
    const phases = (e2e.workers_1.phases_s_of_median_run as Phases | undefined) ?? none;
    const inprocPhases = (e2e.inproc.phases_s_of_median_run as Phases | undefined) ?? none;
    const first1 = phases.first_window_done;
    const windows = e2e.workers_2.windows as number;
    // One window: the pool (or the queue) runs one lane whatever its size, so 2 or 4 workers against
    // 1 is the same configuration twice, its ratio noise (0.83–1.66 in four runs of 1 h): no speed-up.
    const oneLane = windows < 2;
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
        ratio: oneLane ? null : round(w2 / w1, 2),
        goal: 1.6,
        goal_met: oneLane ? null : w2 / w1 >= 1.6,
        workers_2_rows_per_s: w2,
        windows,
        amdahl_ceiling_from_1_worker_phases: ceiling,
        cpu_cores_used_median: {
          workers_1: median((e2e.workers_1.cpu_cores_used as number[]) ?? []),
          workers_2: median((e2e.workers_2.cpu_cores_used as number[]) ?? []),
        },
        cpu_efficiency: round(med(e2e.workers_2, 'rows_per_cpu_s') / med(e2e.workers_1, 'rows_per_cpu_s'), 2),
        cpu_efficiency_note:
          'rows per CPU-second, 2 workers ÷ 1 worker: 1.0 means a second worker costs no extra CPU per row, so on 2 free cores the ratio would approach 2 × this',
        other_processes_cores_median: median((e2e.workers_2.other_processes_cores as number[]) ?? []),
        ...(oneLane ? { note: 'one window: the pool uses min(workers, windows) = 1 worker' } : {}),
      },
      cold_first_job: {
        workers_1_vs_writer: round(med(e2e.workers_1.cold_first_job as Row) / duckdbRate, 2),
        workers_2_vs_workers_1: oneLane
          ? null
          : round(med(e2e.workers_2.cold_first_job as Row) / med(e2e.workers_1.cold_first_job as Row), 2),
        workers_1_rows_per_s: med(e2e.workers_1.cold_first_job as Row),
        workers_2_rows_per_s: med(e2e.workers_2.cold_first_job as Row),
        note: "a pool's first job, its threads started inside it (what every job paid before the shared pool)",
      },
      workers_4_vs_workers_1: {
        ratio: oneLane ? null : round(w4 / w1, 2),
        workers_4_rows_per_s: w4,
        cpu_cores_used_median: median((e2e.workers_4.cpu_cores_used as number[]) ?? []),
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
        ratio: oneLane ? null : round(med(queue.procs_2) / med(queue.procs_1), 2),
        goal: 1.6,
        procs_1_rows_per_s: med(queue.procs_1),
        procs_2_rows_per_s: med(queue.procs_2),
        windows: queue.procs_2.windows,
        note: 'windows over 2 worker processes through the JOBS queue, parts via the local store, one stitch',
      },
      procs_1_vs_workers_1: round(med(queue.procs_1) / w1, 2),
      workers_2_reaches_1M_rows_per_s: w2 >= 1_000_000,
      inproc_vs_workers_1: round(med(e2e.inproc) / w1, 2),
      worker_start_overhead_s_est: round(
        median(((e2e.workers_1.cold_first_job as Row | null)?.first_window_done_s as number[]) ?? []) -
          inprocPhases.first_window_done,
        2,
      ),
      warm_first_window_minus_inproc_s: round(first1 - inprocPhases.first_window_done, 2),
    };
  }

  type Summary = { worker_processes: Record<QueueMode, Row> };
  const long = results['24h'] as Summary;
  const short = results['1h'] as Summary;
  const peak = (runs: readonly Row[]): number | null =>
    runs.length ? Math.max(...runs.map((r) => r.peak_rss_mb as number)) : null;
  const ratioOf = (a: number | null, b: number | null): number | null =>
    a !== null && b !== null ? round(a / b, 2) : null;
  // Peak RSS (VmHWM of the case process) at 6, 12 and 24 h: flat means the 24 h peak is no more
  // than the 6 h one (windows of one hour stream to part files; the stitch copies, never decodes).
  const rssFlat: Row = Object.fromEntries(
    MODES.map((m) => {
      const [h6, h12, h24] = (['6h', '12h', '24h'] as const).map((l) =>
        peak((e2eRuns[l] as Record<E2eMode, Row[]>)[m]),
      );
      return [
        m,
        { '6h_mb': h6, '12h_mb': h12, '24h_mb': h24, ratio_24h_to_6h: ratioOf(h24 ?? null, h6 ?? null) },
      ];
    }),
  );
  for (const m of QUEUE_MODES) {
    const a = (short.worker_processes[m].peak_rss_mb as number | undefined) ?? null;
    const b = (long.worker_processes[m].peak_rss_mb as number | undefined) ?? null;
    rssFlat[m] = {
      '1h_mb': a,
      '24h_mb': b,
      ratio: ratioOf(b, a),
      note: 'per worker process; 1 h is one window',
    };
  }
  return {
    benchmark: 'generate',
    goals:
      '1 worker ≥ 0.8 × writer rows/s; 2 workers ≥ 1.6 × 1 worker; 4 workers on 2 cores; stitch vs the old DuckDB merge; peak RSS flat from 6 h to 24 h',
    scale: SCALE,
    reps: REPS,
    durations_seconds: Object.fromEntries([...labels, ...rssLabels].map((l) => [l, seconds(l)])),
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
        'generateDataset with normalizeManifest({config: {symbol: "BTC"}, duration_seconds, driver: {multiprocess: true, workers: 1|2} or {multiprocess: false}}) (window_seconds 3600 by default), to a temp dir removed afterwards; rows/s = rowCount / wall of the call (windows, stitch, rename). Each run in a fresh child process after an untimed 60 s in-process warm-up of the main thread. With workers, all jobs of a run share one pool (createWorkerPool(workers), as a worker process shares its window threads): its first job is timed separately (cold_first_job: thread start, tsx and DuckDB loading inside the job), then an untimed 60 s job, then the timed job on the warm threads (the main figures).',
      writer:
        'Same rows (eventsBetween per window, same windows), pre-built before each timed section; timed = writing them to ZSTD part files + the stitch, as the generation does; rows/s = rows / (part writing + stitch); the same parts are then merged with the old DuckDB merge (ZSTD, 1 thread) for stitch_vs_old_merge. Per window, the rows are built untimed, then its write is timed, and the times are summed: the 24 h rows are never all in memory (about 76 MB of event objects per hour). part_writer = ParquetPartWriter.write over a MarketEvent[] (the generation writer as is, incl. JS columnarization and its event-loop yields); duckdb_only = pre-built EventColumns batches → DataChunk → appender → COPY (DuckDB alone). After an untimed 60 s warm-up; --expose-gc, gc() before each timed window.',
      ratios:
        'medians over reps; the goal ratio uses duckdb_only (DuckDB alone on pre-built batches); part_writer also charges the writer with the JS columnarization of event objects',
      worker_start_overhead_s_est:
        'first_window_done of the cold first job with 1 worker minus that of in-process (median): worker thread start, tsx registration and transpile in the worker, DuckDB open',
      peak_rss:
        'VmHWM of the case process (all threads, DuckDB native memory), reset after warm-up via /proc/self/clear_refs when allowed; peak_rss_sampled_mb = max of process.memoryUsage.rss() every 50 ms; the end-to-end cases also run at 6 h and 12 h (max over rounds) for peak_rss_flat_with_duration',
      contention:
        'cpu_cores_used = CPU of the case process (all threads) / wall; machine_busy_cores from /proc/stat over the timed run; other_processes_cores = machine busy minus this case (other users of the shared machine)',
      phases:
        'of the run with the median rate (the lower middle one for an even count), from onProgress timestamps: first_window_done, windows_done (last window), close_stitch_store (what is left after the last window: its copy, the footer, pool close; earlier windows are copied while later ones run)',
    },
    results,
    ratios,
    failed_cases: failures,
    peak_rss_24h_mb: Object.fromEntries(
      MODES.map((m) => [m, peak((e2eRuns['24h'] as Record<E2eMode, Row[]>)[m])]),
    ),
    peak_rss_flat_with_duration: rssFlat,
  };
}
