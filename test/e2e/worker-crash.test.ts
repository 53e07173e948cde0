/**
 * A generation worker process killed (-9) in the middle of a job: the job is not served as complete
 * meanwhile, another worker takes it over from the JOBS work queue, and the artifact it finally
 * serves is whole (content length = bytes served = what the Parquet footer describes) and
 * byte-identical (SHA-256) to an uninterrupted run of the same manifest.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetMetadataAsync } from 'hyparquet';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { type JobWorker, startJobWorker } from '../../consumers/generation/job-worker.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import type { TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService, stopProcess } from '../support/process.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const artifacts = mkdtempSync(join(tmpdir(), 'mdp-crash-'));
const ACK_WAIT_MS = '2000';
const config = testConfig({ ARTIFACTS_DIR: artifacts, JOB_ACK_WAIT_MS: ACK_WAIT_MS });
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
let rescuer: JobWorker | null = null;
let crashing: ServiceProcess | null = null;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  http = await startTestHttp(nats, config, accounts);
});

afterAll(async () => {
  if (crashing) await stopProcess(crashing);
  await rescuer?.stop();
  await http?.close();
  await base?.close();
  rmSync(artifacts, { recursive: true, force: true });
});

type Job = {
  status: string;
  attempts: number;
  progress: { rows_done: number };
  result: { download_url: string; content_length_bytes: number; row_count: number } | null;
};

it('survives a worker killed mid-job', async () => {
  const key = (await accounts.key('quant')).key;
  const headers = { 'x-api-key': key, 'content-type': 'application/json' };
  crashing = startService(['worker'], {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    ARTIFACTS_DIR: artifacts,
    JOB_ACK_WAIT_MS: ACK_WAIT_MS,
  });
  await crashing.waitForLog((l) => l.msg === 'running');
  const body = {
    config: { symbol: 'ETH', seed: 3 },
    duration_seconds: 36 * 3600,
    driver: { window_seconds: 1800 },
  };
  const accepted = await (
    await fetch(`${http.url}/data/generate?async=true`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    })
  ).json();
  const status = async () =>
    (await (await fetch(`${http.url}/data/jobs/${accepted.job_id}`, { headers })).json()) as Job;
  let job = await eventually(
    async () => {
      const j = await status();
      if (j.status === 'completed' || j.status === 'failed')
        throw new Error(`job ended before the crash: ${JSON.stringify(j)}`);
      return j.status === 'running' && j.progress.rows_done > 0 && j;
    },
    60_000,
    'the first worker running the job with rows done',
    20,
  );
  await stopProcess(crashing);
  const artifact = `${http.url}/artifacts/${accepted.job_id}.parquet`;
  expect((await fetch(artifact, { headers })).status).toBe(404);
  expect((await status()).status).toBe('running');

  rescuer = await startJobWorker(nats, createLogger('silent'), {
    artifactsDir: artifacts,
    ackWaitMs: Number(ACK_WAIT_MS),
  });
  let last = job;
  job = await eventually(
    async () => {
      last = await status();
      return last.status !== 'running' && last.status !== 'queued' && last;
    },
    180_000,
    'the rescuing worker finishing the job',
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
  });

  expect(job.status).toBe('completed');
  expect(job.attempts).toBe(2);
  const res = await fetch(artifact, { headers });
  const bytes = await res.arrayBuffer();
  expect(bytes.byteLength).toBe(job.result?.content_length_bytes);
  const meta = await parquetMetadataAsync(bytes);
  expect(Number(meta.num_rows)).toBe(job.result?.row_count);

  // The same manifest generated without interruption gives the same bytes.
  const uninterrupted = join(artifacts, 'uninterrupted.parquet');
  await generateDataset({
    manifest: normalizeManifest(body).manifest,
    jobId: accepted.job_id,
    outPath: uninterrupted,
    tmpDir: join(artifacts, 'tmp-uninterrupted'),
  });
  const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
  expect(sha256(new Uint8Array(bytes))).toBe(sha256(readFileSync(uninterrupted)));
}, 300_000);
