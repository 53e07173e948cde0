/**
 * The multi-process case of `bench/generate.ts`: a private nats-server, `<procs>` real `worker`
 * processes (app/main.ts, WINDOW_CONCURRENCY=1, one shared local artifacts directory), one job
 * queued as the `{base_url}` service queues it; rows/s = rows / (queued → record `completed`).
 * Peak RSS is each worker process's VmHWM (all its threads and DuckDB). Prints one JSON line.
 *
 *   node --import tsx bench/lib/generate-queue-case.ts <duration_s> <procs>
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setupStreams } from '../../app/streams.ts';
import { planWindows } from '../../consumers/generation/windows.ts';
import { JOB_SUBJECT, type JobRecord, queuedJob } from '../../contracts/jobs.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { loadConfig } from '../../platform/config.ts';
import { openBucket } from '../../platform/kv.ts';
import { createLogger } from '../../platform/logger.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import { connectNats } from '../../platform/nats.ts';
import { startNatsServer } from '../../platform/nats-server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const round = (x: number, digits = 3): number => Math.round(x * 10 ** digits) / 10 ** digits;
const log = (msg: string): void => void process.stderr.write(`generate-queue-case[${process.pid}]: ${msg}\n`);

async function vmHwmMb(pid: number): Promise<number | null> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status)?.[1];
  return kb ? round(Number(kb) / 1024, 1) : null;
}

/** Starts a worker process; resolves once it logs `running`. */
function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts', 'worker'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before running`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      if (line.includes('"msg":"running"')) resolve(child);
    });
  });
}

async function main(): Promise<void> {
  const [duration, procsArg] = process.argv.slice(2);
  const durationSeconds = Number(duration);
  const procs = Number(procsArg);
  const dir = await mkdtemp(join(tmpdir(), 'bench-generate-queue-'));
  const server = await startNatsServer({ storeDir: join(dir, 'nats') });
  const children: ChildProcess[] = [];
  try {
    const config = loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      API_KEY_SECRET: 'bench-generate-queue-0123',
    });
    const nats = await connectNats(server.url, 'bench', createLogger('silent'));
    await setupStreams(nats, config);
    const jobs = await openBucket<JobRecord>(nats, KV_BUCKETS.jobs, { ttlMs: 30 * 86_400_000 });
    const env = {
      NATS_URL: server.url,
      NODE_ENV: 'test',
      API_KEY_SECRET: config.API_KEY_SECRET,
      ARTIFACTS_DIR: join(dir, 'artifacts'),
      MIN_FREE_DISK_BYTES: '0',
      WINDOW_CONCURRENCY: '1',
    };
    for (let i = 0; i < procs; i++)
      children.push(await startWorker({ ...env, DATA_DIR: join(dir, `worker-${i}`) }));

    /** Queues a job and resolves with its record once completed, and the seconds it took. */
    const runJob = async (jobId: string, seconds: number, windowSeconds?: number) => {
      const manifest = normalizeManifest({
        config: { symbol: 'BTC' },
        duration_seconds: seconds,
        ...(windowSeconds ? { driver: { window_seconds: windowSeconds } } : {}),
      }).manifest;
      const { record, message } = queuedJob(jobId, null, manifest, Date.now());
      await jobs.put(jobId, record);
      const watch = await jobs.raw.watch({ key: jobId });
      const t0 = performance.now();
      await nats.js.publish(JOB_SUBJECT, encode(message));
      for await (const e of watch) {
        const r = e.value.length ? decode<JobRecord>(e.value) : null;
        if (r?.status === 'failed') throw new Error(`job failed: ${JSON.stringify(r.error)}`);
        if (r?.status === 'completed') {
          watch.stop();
          return {
            record: r,
            wallS: (performance.now() - t0) / 1000,
            windows: planWindows(seconds, manifest.driver.window_seconds).length,
          };
        }
      }
      throw new Error('job watch ended');
    };

    // Warm-up (untimed): enough 60 s windows for every process to start its window thread.
    await runJob('sim_batch_benchwarmup00000', 60 * 2 * procs, 60);
    log(`queue ${durationSeconds} s over ${procs} worker process(es)`);
    const { record, wallS, windows } = await runJob('sim_batch_benchgenerate000', durationSeconds);
    const rows = record.artifact?.row_count as number;
    const peaks = await Promise.all(children.map((c) => vmHwmMb(c.pid as number)));
    await nats.nc.close();
    process.stdout.write(
      `${JSON.stringify({
        kind: 'queue',
        duration_seconds: durationSeconds,
        worker_processes: procs,
        windows,
        rows,
        bytes: record.artifact?.content_length_bytes,
        wall_s: round(wallS),
        rows_per_s: Math.round(rows / wallS),
        peak_rss_mb_per_process: peaks,
        peak_rss_mb: Math.max(...peaks.map((p) => p ?? 0)),
        peak_rss_total_mb: round(
          peaks.reduce<number>((a, p) => a + (p ?? 0), 0),
          1,
        ),
      })}\n`,
    );
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
    );
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
