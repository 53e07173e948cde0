/**
 * Generation cannot be amplified, against a real nats-server, without a worker at first (jobs stay
 * queued): a synchronous request ends at its deadline with 504 naming the job to poll, and stops
 * waiting (its KV watch ends) when its client hangs up; an account has a quota of jobs queued or
 * running, held across two gateway processes and inside one MCP batch; and a disk without the
 * configured free space refuses jobs with 503 (at the gateway, and at the worker before it starts).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type JobWorker, startJobWorker } from '../../consumers/generation/job-worker.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const QUOTA = 2;
/** More free bytes than any disk here has. */
const HUGE = 2 ** 52;

let stack: TestStack;
/** A second gateway process on the same NATS that waits long (no deadline in these tests). */
let patient: TestHttp;
/** A gateway that demands more free disk than there is. */
let cramped: TestHttp;
let worker: JobWorker | null = null;

beforeAll(async () => {
  stack = await startStack({ GENERATE_SYNC_DEADLINE_MS: '300', JOB_QUOTA_ACTIVE: String(QUOTA) });
  patient = await startTestHttp(
    stack.nats,
    { ...stack.config, GENERATE_SYNC_DEADLINE_MS: 600_000 },
    stack.accounts,
  );
  cramped = await startTestHttp(stack.nats, { ...stack.config, MIN_FREE_DISK_BYTES: HUGE }, stack.accounts);
});

afterAll(async () => {
  await worker?.stop();
  await cramped?.close();
  await patient?.close();
  await stack?.close();
});

const manifest = { config: { symbol: 'BTC', seed: 3 }, duration_seconds: 60 };

/** `seed`: another manifest (the same one again attaches to its job: job-retries.ts). */
const generate = (
  base: string,
  key: string,
  opts: { async?: boolean; signal?: AbortSignal; seed?: number } = {},
) =>
  fetch(`${base}/data/generate${opts.async ? '?async=true' : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(
      opts.seed === undefined ? manifest : { ...manifest, config: { ...manifest.config, seed: opts.seed } },
    ),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });

/** Consumers on the `jobs` KV stream: the watches of every app here. */
const watchers = async () => (await stack.nats.jsm.consumers.list('KV_jobs').next()).length;

describe('synchronous POST /data/generate', () => {
  it('answers 504 at the deadline with the job id and the status URL to poll', async () => {
    const { key } = await stack.accounts.key('pro');
    const res = await generate(stack.http.url, key);
    const body = await expectError(res, 504, 'generation_timeout');
    expect(body.job_id).toMatch(/^sim_batch_[0-9A-Za-z]{16}$/);
    expect(body.status_url).toBe(`${stack.http.url}/data/jobs/${body.job_id}`);
    expect(res.headers.get('location')).toBe(body.status_url);
    const status = await fetch(body.status_url as string, { headers: { 'x-api-key': key } });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ job_id: body.job_id, status: 'queued' });
  });

  it('stops waiting when its client disconnects, and all waits share one watch', async () => {
    const { key } = await stack.accounts.key('pro');
    const before = await watchers();
    const clients = [0, 1].map(() => new AbortController());
    const pending = clients.map((c) =>
      generate(patient.url, key, { signal: c.signal }).catch((e: Error) => e.name),
    );
    await vi.waitFor(() => expect(patient.generation.waiting).toBe(2), { timeout: 10_000 });
    expect((await watchers()) - before).toBe(1);
    for (const c of clients) c.abort();
    expect(await Promise.all(pending)).toEqual(['AbortError', 'AbortError']);
    await vi.waitFor(() => expect(patient.generation.waiting).toBe(0), { timeout: 10_000 });
  });
});

describe('the quota of jobs queued or running per account', () => {
  it('refuses the job past the quota with 429 and Retry-After, on every gateway process', async () => {
    const { key } = await stack.accounts.key('pro');
    for (let i = 0; i < QUOTA; i++)
      expect((await generate(stack.http.url, key, { async: true, seed: 100 + i })).status).toBe(202);
    for (const base of [stack.http.url, patient.url]) {
      const res = await generate(base, key, { async: true, seed: 200 });
      const body = await expectError(res, 429, 'quota_exceeded');
      expect(body.message).toContain(`at most ${QUOTA}`);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const other = await stack.accounts.key('pro');
    expect((await generate(patient.url, other.key, { async: true })).status).toBe(202);
  });

  it('holds inside one MCP batch: of 5 generate_dataset calls, only the quota is queued', async () => {
    const { key } = await stack.accounts.key('quant');
    const calls = Array.from({ length: 5 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'tools/call',
      params: { name: 'generate_dataset', arguments: { symbol: 'ETH', seed: i, duration_seconds: 60 } },
    }));
    const res = await fetch(`${stack.http.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(calls),
    });
    const answers = (await res.json()) as { result: { content: { text: string }[]; isError: boolean } }[];
    const errors = answers.map((a) => JSON.parse(a.result.content[0]?.text ?? '{}').error);
    expect(errors.filter((e) => e === 'quota_exceeded')).toHaveLength(5 - QUOTA);
    expect(errors.filter((e) => e === 'generation_timeout')).toHaveLength(QUOTA);
  });
});

describe('free disk', () => {
  it('is checked by the gateway before a job is queued: 503 storage_full with Retry-After', async () => {
    const { key } = await stack.accounts.key('pro');
    const before = (await stack.nats.jsm.streams.info(STREAMS.JOBS)).state.messages;
    const res = await generate(cramped.url, key, { async: true });
    await expectError(res, 503, 'storage_full');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await stack.nats.jsm.streams.info(STREAMS.JOBS)).state.messages).toBe(before);
  });

  it('is checked by the worker before a job starts: the job fails with storage_full, the caller gets 503', async () => {
    worker = await startJobWorker(stack.nats, createLogger('silent'), {
      artifactsDir: stack.artifacts,
      minFreeDiskBytes: HUGE,
    });
    const { key } = await stack.accounts.key('pro');
    const res = await generate(patient.url, key);
    await expectError(res, 503, 'storage_full');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});
