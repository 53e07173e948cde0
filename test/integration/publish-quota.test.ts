/**
 * What one account may publish with `stream: true` is bounded per UTC day, across processes: two
 * `{base_url}` apps on one NATS share the account's ledger, a batch past the quota is refused whole
 * (429 `quota_exceeded`, Retry-After until the next UTC day) and stores nothing, another account is
 * unaffected, and a refused batch can be sent again once there is room (no record kept). The
 * `published_batches` records expire with `MD`'s max age.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { accountMdFilter } from '../../contracts/subjects.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedCount } from '../support/stored-seqs.ts';

const env = { PUBLISH_EVENTS_PER_DAY: '5', MD_MAX_AGE_S: '7200' };
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
  expect(await storedCount(stack.nats, STREAMS.MD, accountMdFilter(accountId))).toBe(5);
  // Another account has its own day.
  expect((await publish(stack.http.url, other.key, 0, 5)).status).toBe(200);
  // A batch larger than what is left is refused whole, and leaves no record: it can be sent again.
  const big = await stack.accounts.key('basic', { scopes: ['mcp'] });
  expect((await publish(stack.http.url, big.key, 0, 6)).status).toBe(429);
  expect(await storedCount(stack.nats, STREAMS.MD, accountMdFilter(big.accountId))).toBe(0);
  expect((await publish(stack.http.url, big.key, 0, 5)).status).toBe(200);
  expect(await storedCount(stack.nats, STREAMS.MD, accountMdFilter(big.accountId))).toBe(5);
});

it("keeps published_batches records no longer than MD's max age", async () => {
  const info = await stack.nats.jsm.streams.info(`KV_${KV_BUCKETS.publishedBatches}`);
  expect(info.config.max_age).toBe(7_200 * 1e9);
});
