/**
 * `npm run bench -- all`: every benchmark at a reduced scale, one after another, each in a process
 * of its own (`bench/run.ts <name>` with the environment below), in about ten minutes on a
 * two-core machine. Prints one JSON document: each benchmark's ratios (bench/lib/ratios.ts), its
 * wall time and, for one that failed, why; and writes the same to `.data/bench/all.json` (and the
 * full results beside it) for `npm run bench:check`.
 *
 * The scale is small enough for the whole run to fit and large enough for each ratio to mean the
 * same as at full scale: it is the configuration `bench/baseline.json` was accepted at, so change
 * both together. `BENCH_ALL_ONLY=unified,grpc` runs a subset.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { type Ratio, ratiosOf } from './lib/ratios.ts';

/** Each benchmark and the environment that scales it down (see each file's header). */
export const REDUCED: Record<string, Record<string, string>> = {
  unified: {
    BENCH_SCALE: '0.25',
    BENCH_SAT_DELIVERIES: '8000000',
    BENCH_SAT_REPEATS: '3',
    BENCH_CHECK_DEFAULT_BACKLOG: '0',
    BENCH_LATENCY_REPEATS: '3',
  },
  grpc: { GRPC_BENCH_SECONDS: '2', GRPC_BENCH_ROUNDS: '3', GRPC_BENCH_CATCHUP: '100000' },
  disksync: { DISKSYNC_BENCH_SECONDS: '2', DISKSYNC_BENCH_ROUNDS: '3', DISKSYNC_BENCH_CATCHUP: '100000' },
  jsonrpc: { BENCH_SCALE: '0.3' },
  client: { BENCH_EVENTS: '50000', BENCH_ROUNDS: '3', BENCH_WARMUP_S: '1', BENCH_MEASURE_S: '3' },
  guard: { BENCH_REQUESTS: '20000' },
  normalize: { BENCH_SCALE: '0.3' },
  connector: { BENCH_SCALE: '0.3' },
  generate: { BENCH_SCALE: '0.05', BENCH_REPS: '1' },
  cluster: { BENCH_STEPS: '100,200', BENCH_WARMUP_S: '2', BENCH_MEASURE_S: '3' },
  replay: { BENCH_REPLAY_EVENTS: '200000', BENCH_REPLAY_ROUNDS: '3', BENCH_REPLAY_FIRST_SAMPLES: '40' },
  export: { BENCH_EXPORT_EVENTS: '200000', BENCH_EXPORT_ROUNDS: '2' },
  derived: { BENCH_DERIVED_EVENTS: '200000', BENCH_DERIVED_LIVE_S: '8' },
  isolation: { ISOLATION_SECONDS: '3', ISOLATION_ROUNDS: '2' },
  regions: { BENCH_REGIONS_EVENTS: '200000', BENCH_REGIONS_LIVE_S: '5' },
};

const root = fileURLToPath(new URL('..', import.meta.url));
export const OUT_DIR = `${root}.data/bench`;
const progress = (msg: string) =>
  process.stderr.write(`[bench all ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

export type AllResult = {
  benchmark: 'all';
  started_at: string;
  machine: { cpus: number; memory_gb: number; node: string; load_at_start: number[] };
  benchmarks: Record<string, { seconds: number; ok: boolean; error?: string; ratios: Record<string, Ratio> }>;
  ratios: Record<string, Ratio>;
};

/** Runs `bench/run.ts name` with `env`; its stdout parsed as JSON (stderr passes through). */
function runOne(name: string, env: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `${root}bench/run.ts`, name], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code !== 0) return reject(new Error(`exited ${code ?? signal}`));
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (err) {
        reject(new Error(`no JSON on stdout: ${String(err)}`));
      }
    });
  });
}

/** `only`: these benchmarks (default: BENCH_ALL_ONLY, else every one); `out`: where all.json goes. */
export async function run(
  only = process.env.BENCH_ALL_ONLY?.split(',').map((s) => s.trim()),
  out = `${OUT_DIR}/all.json`,
): Promise<AllResult> {
  const names = Object.keys(REDUCED).filter((n) => !only || only.includes(n));
  const unknown = (only ?? []).filter((n) => !(n in REDUCED));
  if (unknown.length > 0) throw new Error(`BENCH_ALL_ONLY: unknown benchmark(s) ${unknown.join(', ')}`);
  mkdirSync(OUT_DIR, { recursive: true });
  const result: AllResult = {
    benchmark: 'all',
    started_at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      memory_gb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      load_at_start: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    benchmarks: {},
    ratios: {},
  };
  for (const name of names) {
    const t0 = performance.now();
    progress(`${name} …`);
    try {
      const doc = await runOne(name, REDUCED[name] ?? {});
      writeFileSync(`${OUT_DIR}/${name}.json`, `${JSON.stringify(doc, null, 2)}\n`);
      const ratios = ratiosOf(doc, name);
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      result.benchmarks[name] = { seconds, ok: true, ratios };
      Object.assign(result.ratios, ratios);
      progress(`${name}: ${Object.keys(ratios).length} ratios in ${seconds} s`);
    } catch (err) {
      const seconds = Math.round((performance.now() - t0) / 100) / 10;
      result.benchmarks[name] = { seconds, ok: false, error: String(err), ratios: {} };
      progress(`${name} failed after ${seconds} s: ${String(err)}`);
    }
  }
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
