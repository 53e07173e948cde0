/**
 * Caches are bounded (real `{base_url}` app, private nats-server, small bounds by configuration):
 * - the `CACHE` stream has the configured max bytes and age and refuses new messages when full;
 * - an account's caches count against its quota: bytes (CACHE_QUOTA_BYTES) and caches
 *   (CACHE_QUOTA_COUNT); past either, `POST /mcp/normalize` with `enable_cache` is 429
 *   `quota_exceeded` with Retry-After, and deleting a cache gives its share back;
 * - accounts together can fill the stream only to its max bytes: then 503 `storage_full`, and
 *   the refused cache leaves no event on the stream and no count in its account's quota.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const QUOTA_BYTES = 40_000;
const QUOTA_COUNT = 3;
const STREAM_BYTES = 100_000;
let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({
    CACHE_QUOTA_BYTES: String(QUOTA_BYTES),
    CACHE_QUOTA_COUNT: String(QUOTA_COUNT),
    CACHE_MAX_BYTES: String(STREAM_BYTES),
    CACHE_MAX_AGE_S: '3600',
  });
});

afterAll(async () => {
  await stack?.close();
});

let batch = 0;
/** `n` distinct Binance trades (content never cached before). */
const trades = (n: number) => {
  batch++;
  return Array.from({ length: n }, (_, i) => ({
    payload: {
      e: 'trade',
      E: 1_700_000_000_000 + i,
      s: 'BTCUSDT',
      t: batch * 100_000 + i,
      p: '100.00',
      q: '0.5',
      T: 1_700_000_000_000 + i,
      m: false,
    },
  }));
};
const cache = (key: string, n: number) =>
  fetch(`${stack.http.url}/mcp/normalize`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'binance', events: trades(n), enable_cache: true }),
  });
const stats = async (key: string) =>
  (await (await fetch(`${stack.http.url}/mcp/caches/stats`, { headers: { 'x-api-key': key } })).json()) as {
    caches: { cache_key: string }[];
    totals: { caches: number; stored_bytes: number };
  };
const streamBytes = async () => (await stack.nats.jsm.streams.info(STREAMS.CACHE)).state.bytes;

it('gives CACHE its max bytes and age, refusing new messages when full', async () => {
  const { config } = await stack.nats.jsm.streams.info(STREAMS.CACHE);
  expect(config.max_bytes).toBe(STREAM_BYTES);
  expect(config.max_age).toBe(3_600 * 1e9);
  expect(config.discard).toBe('new');
});

it('refuses caching past the account byte quota, and gives a deleted cache its share back', async () => {
  const { key } = await stack.accounts.key('pro', { scopes: ['mcp'] });
  let refused: Response | null = null;
  for (let i = 0; i < 20 && !refused; i++) {
    const res = await cache(key, 60);
    if (res.status === 429) refused = res;
    else expect(res.status).toBe(200);
  }
  expect(refused).not.toBeNull();
  const body = await expectError(refused as Response, 429, 'quota_exceeded');
  expect(body.message).toMatch(/bytes/);
  expect(Number((refused as Response).headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  const mine = await stats(key);
  expect(mine.totals.stored_bytes).toBeLessThanOrEqual(QUOTA_BYTES);
  // Deleting one gives its bytes back: the same request now fits.
  const first = mine.caches[0]?.cache_key as string;
  expect(
    (
      await fetch(`${stack.http.url}/mcp/caches/${first}`, {
        method: 'DELETE',
        headers: { 'x-api-key': key },
      })
    ).status,
  ).toBe(200);
  expect((await cache(key, 60)).status).toBe(200);
});

it('refuses more than CACHE_QUOTA_COUNT caches per account', async () => {
  const { key } = await stack.accounts.key('pro', { scopes: ['mcp'] });
  for (let i = 0; i < QUOTA_COUNT; i++) expect((await cache(key, 1)).status).toBe(200);
  const body = await expectError(await cache(key, 1), 429, 'quota_exceeded');
  expect(body.message).toMatch(/caches/);
  expect((await stats(key)).totals.caches).toBe(QUOTA_COUNT);
});

it('keeps the stream within its max bytes across accounts: then 503 storage_full, nothing left behind', async () => {
  let full: Response | null = null;
  let last = { key: '', accountId: '' };
  for (let a = 0; a < 10 && !full; a++) {
    last = await stack.accounts.key('pro', { scopes: ['mcp'] });
    for (let i = 0; i < 10 && !full; i++) {
      const res = await cache(last.key, 60);
      if (res.status === 503) full = res;
      else if (res.status === 429) break;
      else expect(res.status).toBe(200);
    }
  }
  expect(full).not.toBeNull();
  await expectError(full as Response, 503, 'storage_full');
  expect(await streamBytes()).toBeLessThanOrEqual(STREAM_BYTES);
  // The refused cache left no event on the stream and no count in the quota: only listed caches do.
  const listed = await stats(last.key);
  const info = await stack.nats.jsm.streams.info(STREAMS.CACHE, {
    subjects_filter: `cache.${last.accountId}.>`,
  });
  const events = Object.values(info.state.subjects ?? {}).reduce((n, c) => n + c, 0);
  expect(events).toBe(60 * listed.totals.caches);
  expect(await stack.http.caches.quota.usage(last.accountId)).toEqual({
    bytes: listed.totals.stored_bytes,
    caches: listed.totals.caches,
  });
});
