/**
 * Retries of `POST /data/generate` attach to their job (real `{base_url}` app, private nats-server,
 * no worker: every job stays queued, every synchronous request ends 504 at a 1 ms deadline):
 * - the spec's "retry" after 504, repeated past the account's job quota, answers the same job each
 *   time and queues one job message, never `quota_exceeded`;
 * - `Idempotency-Key`: the same key answers the same job; reused with another manifest, 422;
 *   malformed, 400;
 * - identical requests at once queue exactly one job between them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const QUOTA = 2;
let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({ GENERATE_SYNC_DEADLINE_MS: '1', JOB_QUOTA_ACTIVE: String(QUOTA) });
});

afterAll(async () => {
  await stack?.close();
});

const manifest = (seed: number) => ({ config: { symbol: 'BTC', seed }, duration_seconds: 60 });
const generate = (key: string, seed: number, headers: Record<string, string> = {}, async = false) =>
  fetch(`${stack.http.url}/data/generate${async ? '?async=true' : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers },
    body: JSON.stringify(manifest(seed)),
  });
const queuedMessages = async () => (await stack.nats.jsm.streams.info(STREAMS.JOBS)).state.messages;

it('answers every retry after 504 with the same job, past the job quota, queueing one job', async () => {
  const { key } = await stack.accounts.key('pro', { scopes: ['generate'] });
  const before = await queuedMessages();
  const jobs = new Set<unknown>();
  for (let i = 0; i < QUOTA + 3; i++) {
    const body = await expectError(await generate(key, 1), 504, 'generation_timeout');
    expect(body.message).toMatch(/resend the request/);
    jobs.add(body.job_id);
  }
  expect(jobs.size).toBe(1);
  expect((await queuedMessages()) - before).toBe(1);
  // Another manifest is another job (the quota still has room for it).
  const other = await expectError(await generate(key, 2), 504, 'generation_timeout');
  expect(jobs.has(other.job_id)).toBe(false);
});

it('honours Idempotency-Key: same key same job, another manifest 422, malformed 400', async () => {
  const { key } = await stack.accounts.key('pro', { scopes: ['generate'] });
  const first = await generate(key, 10, { 'idempotency-key': 'order-42' }, true);
  expect(first.status).toBe(202);
  const job = ((await first.json()) as { job_id: string }).job_id;
  const again = await generate(key, 10, { 'idempotency-key': 'order-42' }, true);
  expect(((await again.json()) as { job_id: string }).job_id).toBe(job);
  await expectError(await generate(key, 11, { 'idempotency-key': 'order-42' }, true), 422, 'unprocessable');
  await expectError(
    await generate(key, 10, { 'idempotency-key': 'x'.repeat(300) }, true),
    400,
    'invalid_params',
  );
});

it('queues one job for identical requests sent at once', async () => {
  const { key } = await stack.accounts.key('pro', { scopes: ['generate'] });
  const before = await queuedMessages();
  const answers = await Promise.all(Array.from({ length: 6 }, () => generate(key, 20, {}, true)));
  const ids = new Set<string>();
  for (const res of answers) {
    expect(res.status).toBe(202);
    ids.add(((await res.json()) as { job_id: string }).job_id);
  }
  expect(ids.size).toBe(1);
  expect((await queuedMessages()) - before).toBe(1);
});
