/**
 * A worker killed mid-job on the cluster (test/e2e/worker-crash.test.ts does it on one server): a
 * 3-node nats-server cluster with every stream, KV bucket and the artifact object store R3, two
 * real `worker` processes and a real `gateway http` process on it (the comma-separated NATS_URL of
 * every node), ARTIFACT_STORE=nats (no shared disk: each process its own DATA_DIR), a short
 * JOB_ACK_WAIT_MS. An async job (`Prefer: respond-async`, a Quant key) is submitted through the
 * gateway; the worker that took it (its 'generation job started' line) is killed (-9) once a first
 * window of the job is written and before it completes. The job is not served meanwhile; the
 * other worker takes it over from the JOBS work queue and completes it, and the artifact the
 * gateway serves is whole and byte-identical (SHA-256) to an uninterrupted in-process run of the
 * same manifest and job id.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadataAsync } from 'hyparquet';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import type { Nats } from '../../platform/nats.ts';
import { type NatsCluster, startNatsCluster } from '../../platform/nats-cluster.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { connectClusterNats } from '../support/cluster-nats.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import {
  killAll,
  type LogLine,
  type ServiceProcess,
  startHttpGatewayProcess,
  startService,
} from '../support/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-fault-worker-'));
const config = testConfig({ STREAM_REPLICAS: '3' });
const COMMON = { STREAM_REPLICAS: '3', ARTIFACT_STORE: 'nats', MIN_FREE_DISK_BYTES: '0' };
// 24 windows of 30 min: the first is written long before the last, whatever the machine's speed.
const BODY = {
  config: { symbol: 'ETH', seed: 5 },
  duration_seconds: 12 * 3600,
  driver: { window_seconds: 1800 },
};
let cluster: NatsCluster;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const workers: ServiceProcess[] = [];
let httpUrl = '';

type Job = {
  status: string;
  attempts: number;
  progress: { rows_done: number };
  result: { download_url: string; content_length_bytes: number; row_count: number } | null;
};

beforeAll(async () => {
  cluster = await startNatsCluster({ baseDir: join(dir, 'nats'), readyTimeoutMs: 120_000 });
  nats = await connectClusterNats(cluster.url, config);
  accounts = await startTestAccounts(nats, config);
  for (const i of [0, 1]) {
    const w = startService(['worker'], {
      ...COMMON,
      NATS_URL: cluster.url,
      NODE_ENV: 'test',
      LOG_LEVEL: 'debug', // its window lines say when the job is under way
      API_KEY_SECRET: config.API_KEY_SECRET,
      DATA_DIR: join(dir, `worker-${i}`),
      JOB_ACK_WAIT_MS: '4000',
      WINDOW_CONCURRENCY: '1',
    });
    processes.push(w);
    workers.push(w);
  }
  const [url] = await Promise.all([
    startHttpGatewayProcess(cluster.url, config.API_KEY_SECRET, processes, {
      ...COMMON,
      DATA_DIR: join(dir, 'gateway'),
    }),
    ...workers.map((w) => w.waitForLog((l) => l.msg === 'running', 120_000)),
  ]);
  httpUrl = url as string;
}, 240_000);

afterAll(async () => {
  await killAll(processes);
  accounts?.stop();
  await nats?.nc.close().catch(() => {});
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const ofJob = (job: string, msg: string) => (l: LogLine) => l.msg === msg && l.job === job;

it('a worker killed mid-job on the cluster: the other completes it, the artifact byte-identical', {
  timeout: 240_000,
}, async () => {
  const { key } = await accounts.key('quant');
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const submitted = await fetch(`${httpUrl}/data/generate`, {
    method: 'POST',
    headers: { ...headers, prefer: 'respond-async' },
    body: JSON.stringify(BODY),
  });
  expect(submitted.status).toBe(202);
  const jobId = ((await submitted.json()) as { job_id: string }).job_id;
  const status = async () =>
    (await (await fetch(`${httpUrl}/data/jobs/${jobId}`, { headers })).json()) as Job;

  // The worker that took the job, killed once a first window of it is written.
  const taker = await eventually(
    () => workers.find((w) => w.logs.some(ofJob(jobId, 'generation job started'))),
    120_000,
    'a worker taking the job',
  );
  await eventually(
    () => workers.some((w) => w.logs.some(ofJob(jobId, 'window task done'))),
    120_000,
    'a first window of the job written',
  );
  taker.child.kill('SIGKILL');
  await taker.exited;
  const windowsDoneAtKill = workers.flatMap((w) => w.logs.filter(ofJob(jobId, 'window task done'))).length;
  expect(taker.logs.some(ofJob(jobId, 'generation job completed')), 'killed before completing').toBe(false);
  const rescuer = workers.find((w) => w !== taker) as ServiceProcess;
  expect((await status()).status).not.toBe('completed');
  expect((await fetch(`${httpUrl}/artifacts/${jobId}.parquet`, { headers })).status).toBe(404);

  let last: Job | null = null;
  const job = await eventually(
    async () => {
      last = await status().catch(() => null);
      return last && last.status !== 'running' && last.status !== 'queued' && last;
    },
    180_000,
    'the other worker finishing the job',
    250,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
  });
  expect(job.status).toBe('completed');
  expect(job.attempts).toBeGreaterThanOrEqual(2);
  expect(rescuer.logs.some(ofJob(jobId, 'generation job completed')), 'completed by the other worker').toBe(
    true,
  );

  // Served whole by the gateway from the object store, as an uninterrupted run writes it.
  const res = await fetch(job.result?.download_url as string, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  const served = await res.arrayBuffer();
  const bytes = new Uint8Array(served);
  expect(bytes.byteLength).toBe(job.result?.content_length_bytes);
  expect(Number((await parquetMetadataAsync(served)).num_rows)).toBe(job.result?.row_count);
  const uninterrupted = await generateDataset({
    manifest: normalizeManifest(BODY).manifest,
    jobId,
    outPath: join(dir, 'uninterrupted.parquet'),
    tmpDir: join(dir, 'tmp-uninterrupted'),
  });
  expect(sha256(bytes)).toBe(sha256(readFileSync(uninterrupted.path)));
  console.log(
    JSON.stringify({
      job: jobId,
      attempts: job.attempts,
      windowsDoneAtKill,
      windows: (BODY.duration_seconds / BODY.driver.window_seconds) | 0,
      rows: job.result?.row_count,
      bytes: job.result?.content_length_bytes,
    }),
  );
});
