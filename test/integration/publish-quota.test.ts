/**
 * What one account may publish with `stream: true` is bounded per UTC day, across processes: two
 * `{base_url}` apps on one NATS share the account's ledger, a batch past the quota is refused whole
 * (429 `quota_exceeded`, Retry-After until the next UTC day) and stores nothing, another account is
 * unaffected, and a refused batch can be sent again once there is room (no record kept). The
 * `published_batches` records expire with `OWN`'s max age. What accounts publish lives on `OWN`,
 * bounded apart from `MD`: filling it never pushes the platform's history out of retention.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { ownAccountFilter } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { trade as platformTrade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedCount } from '../support/stored-seqs.ts';

// `OWN` small enough for the test to fill (each event ~250 bytes stored); `MD` far larger.
const OWN_MAX_BYTES = 64 * 1024;
const env = { PUBLISH_EVENTS_PER_DAY: '5', OWN_MAX_AGE_S: '7200', OWN_MAX_BYTES: String(OWN_MAX_BYTES) };
let stack: TestStack;
let second: TestHttp;

beforeAll(async () => {
  stack = await startStack(env);
  second = await startTestHttp(stack.nats, stack.config, stack.accounts);
});

afterAll(async () => {
  await second?.close();
  await stack?.close();
});

const trade = (t: number) => ({
  payload: {
    e: 'trade',
    E: 1_700_000_000_000 + t,
    s: 'BTCUSDT',
    t,
    p: '1.00',
    q: '0.5',
    T: 1_700_000_000_000 + t,
    m: false,
  },
});
const publish = (url: string, key: string, from: number, count: number) =>
  fetch(`${url}/mcp/normalize`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      source: 'binance',
      events: Array.from({ length: count }, (_, i) => trade(from + i)),
      stream: true,
    }),
  });

it("stops an account's stream: true publishing at its daily quota on every process, and only that account's", async () => {
  const { key, accountId } = await stack.accounts.key('basic', { scopes: ['mcp'] });
  const other = await stack.accounts.key('basic', { scopes: ['mcp'] });
  expect((await publish(stack.http.url, key, 0, 3)).status).toBe(200);
  expect((await publish(second.url, key, 100, 2)).status).toBe(200); // 5 of 5, on the other process
  const refused = await publish(second.url, key, 200, 1);
  expect(refused.status).toBe(429);
  const retryAfter = Number(refused.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(86_400);
  expect((await refused.json()).error).toBe('quota_exceeded');
  expect((await publish(stack.http.url, key, 300, 1)).status).toBe(429);
  expect(await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(accountId))).toBe(5);
  // Another account has its own day.
  expect((await publish(stack.http.url, other.key, 0, 5)).status).toBe(200);
  // A batch larger than what is left is refused whole, and leaves no record: it can be sent again.
  const big = await stack.accounts.key('basic', { scopes: ['mcp'] });
  expect((await publish(stack.http.url, big.key, 0, 6)).status).toBe(429);
  expect(await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(big.accountId))).toBe(0);
  expect((await publish(stack.http.url, big.key, 0, 5)).status).toBe(200);
  expect(await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(big.accountId))).toBe(5);
});

it("keeps published_batches records no longer than OWN's max age", async () => {
  const info = await stack.nats.jsm.streams.info(`KV_${KV_BUCKETS.publishedBatches}`);
  expect(info.config.max_age).toBe(7_200 * 1e9);
  expect((await stack.nats.jsm.streams.info(STREAMS.OWN)).config.max_age).toBe(7_200 * 1e9);
});

it("lets tenants fill OWN to its bound, never pushing the platform's history out of MD", async () => {
  const log = createLogger('silent');
  const platform = Array.from({ length: 50 }, (_, i) => ({
    event: platformTrade('BTC', 9_000_000 + i),
    id: `quota-platform.${i}`,
    ingestUs: nowUs(),
  }));
  await publishEvents(stack.nats.js, platform, log);
  const mdBefore = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
  // Many free accounts, each to its daily quota: far more than OWN holds.
  for (let i = 0; i < 60; i++) {
    const { key } = await stack.accounts.key('basic', { scopes: ['mcp'] });
    expect((await publish(stack.http.url, key, 1_000 * i, 5)).status).toBe(200);
  }
  const own = (await stack.nats.jsm.streams.info(STREAMS.OWN)).state;
  expect(own.bytes).toBeLessThanOrEqual(OWN_MAX_BYTES);
  expect(own.first_seq).toBeGreaterThan(1); // OWN dropped its own oldest
  const mdAfter = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
  expect(mdAfter.first_seq).toBe(mdBefore.first_seq);
  expect(mdAfter.messages).toBe(mdBefore.messages);
});
