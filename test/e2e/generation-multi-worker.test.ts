/**
 * One job's windows spread over three real `worker` processes on one NATS (ARTIFACT_STORE=nats,
 * each its own DATA_DIR, one window lane each). A worker other than the one that took the job is
 * killed (-9) in the middle of a window: that window is redelivered after the ack wait and written
 * by another process, the job completes once (one attempt), its progress was reported window by
 * window, and the artifact is byte-identical (SHA-256) to a single-process run of the same
 * manifest and job id. The job's parts and window outcomes are gone afterwards.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { openWindowOutcomes } from '../../consumers/generation/window-queue.ts';
import type { JobRecord } from '../../contracts/jobs.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { KV_BUCKETS, OBJECT_STORES } from '../../contracts/streams.ts';
import { NatsArtifactStore } from '../../platform/artifact-store/nats.ts';
import { openBucket } from '../../platform/kv.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type LogLine, type ServiceProcess, startService, stopProcess } from '../support/process.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const WORKERS = 3;
const ACK_WAIT_MS = '2000';
const dir = mkdtempSync(join(tmpdir(), 'mdp-multi-worker-'));
const config = testConfig({ ARTIFACT_STORE: 'nats', ARTIFACTS_DIR: join(dir, 'gateway') });
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  http = await startTestHttp(nats, config, accounts);
  for (let i = 0; i < WORKERS; i++)
    workers.push(
      startService(['worker'], {
        NATS_URL: server.url,
        NODE_ENV: 'test',
        LOG_LEVEL: 'debug',
        API_KEY_SECRET: config.API_KEY_SECRET,
        ARTIFACT_STORE: 'nats',
        DATA_DIR: join(dir, `worker-${i}`),
        JOB_ACK_WAIT_MS: ACK_WAIT_MS,
        WINDOW_CONCURRENCY: '1',
        MIN_FREE_DISK_BYTES: '0',
      }),
    );
  await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'running', 90_000)));
}, 120_000);

afterAll(async () => {
  await killAll(workers);
  await http?.close();
  await base?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const ofJob = (job: string, msg: string) => (l: LogLine) => l.msg === msg && l.job === job;

it('spreads a job over worker processes and survives one killed mid-window', async () => {
  const key = (await accounts.key('quant', { scopes: ['generate'] })).key;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  const body = {
    config: { symbol: 'BTC', seed: 11 },
    duration_seconds: 12 * 3600,
    driver: { window_seconds: 1800 },
  };
  const windows = (12 * 3600) / 1800;

  // Every state the job record goes through (the watch sees each put, however fast).
  const seen: JobRecord[] = [];
  const jobsKv = await openBucket<JobRecord>(nats, KV_BUCKETS.jobs);
  const watch = await jobsKv.raw.watch({ include: 'updates' });
  void (async () => {
    for await (const e of watch) if (e.operation === 'PUT') seen.push(decode<JobRecord>(e.value));
  })();

  const accepted = (await (
    await fetch(`${http.url}/data/generate?async=true`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
  ).json()) as { job_id: string };
  const jobId = accepted.job_id;

  // The worker that took the job, then another one caught in its first window of this job.
  const coordinator = await eventually(
    () => workers.find((w) => w.logs.some(ofJob(jobId, 'generation job started'))),
    90_000,
    'a worker taking the job',
  );
  const others = workers.filter((w) => w !== coordinator);
  const victim = await Promise.race(
    others.map(async (w) => {
      const started = await w.waitForLog(ofJob(jobId, 'window task started'), 120_000);
      return { w, window: started.window as number };
    }),
  );
  await stopProcess(victim.w);
  expect(victim.w.logs.some((l) => ofJob(jobId, 'window task done')(l) && l.window === victim.window)).toBe(
    false,
  );

  const status = async () =>
    (await (await fetch(`${http.url}/data/jobs/${jobId}`, { headers })).json()) as {
      status: string;
      attempts: number;
      result: { download_url: string; row_count: number; content_length_bytes: number } | null;
    };
  const job = await eventually(
    async () => {
      const j = await status();
      return j.status !== 'running' && j.status !== 'queued' && j;
    },
    240_000,
    'the job finishing',
    100,
  );
  watch.stop();
  expect(job.status).toBe('completed');
  expect(job.attempts).toBe(1);

  // The killed worker's window went to another process, delivered a second time.
  const survivors = workers.filter((w) => w !== victim.w);
  const redelivered = survivors.flatMap((w) =>
    w.logs.filter((l) => ofJob(jobId, 'window task started')(l) && l.window === victim.window),
  );
  expect(redelivered.some((l) => (l.delivery as number) >= 2)).toBe(true);
  // Windows were written by more than one process.
  const writers = workers.filter((w) => w.logs.some(ofJob(jobId, 'window task done')));
  expect(writers.length).toBeGreaterThan(1);

  // Progress reported as windows completed, before the end.
  const rows = job.result?.row_count as number;
  expect(
    seen.some(
      (r) =>
        r.job_id === jobId &&
        r.status === 'running' &&
        r.progress.rows_done > 0 &&
        r.progress.rows_done < rows,
    ),
  ).toBe(true);

  // The artifact: byte-identical to one process generating the same manifest and job id.
  const bytes = new Uint8Array(
    await (await fetch(job.result?.download_url as string, { headers: { 'x-api-key': key } })).arrayBuffer(),
  );
  expect(bytes.byteLength).toBe(job.result?.content_length_bytes);
  const single = await generateDataset({
    manifest: normalizeManifest(body).manifest,
    jobId,
    outPath: join(dir, 'single.parquet'),
    tmpDir: join(dir, 'tmp-single'),
  });
  expect(single.rowCount).toBe(rows);
  expect(sha256(bytes)).toBe(sha256(readFileSync(single.path)));

  // Nothing of the windows is left: no part in the bucket, no outcome in KV.
  const store = await NatsArtifactStore.open(nats, OBJECT_STORES.artifacts);
  expect((await store.list()).map((f) => f.name).filter((n) => n.startsWith('parts/'))).toEqual([]);
  const outcomes = await openWindowOutcomes(nats);
  expect([...(await outcomes.entries()).keys()].filter((k) => k.startsWith(jobId))).toEqual([]);
  expect(windows).toBeGreaterThan(WORKERS);
}, 600_000);
