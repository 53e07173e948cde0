/**
 * Normalization and caches on the real app: the cache lifecycle (create → stats → manifest →
 * Parquet export read back by hyparquet → SSE replay resumed midway → delete → 404), publishing
 * to the live stream, and bad input that caches and publishes nothing.
 */
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { parseMarketModelConfig } from '../../producers/simulator/config.ts';
import { simulateBlock } from '../../producers/simulator/market.ts';
import { expectError } from '../support/http.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let key: string;
const simulated: MarketEvent[] = simulateBlock(parseMarketModelConfig({ symbol: 'BTC', seed: 4 }), 0).slice(
  0,
  400,
);

beforeAll(async () => {
  stack = await startStack();
  key = (await stack.accounts.key('pro', { scopes: ['mcp'] })).key;
});

afterAll(async () => {
  await stack?.close();
});

const req = (method: string, path: string, body?: unknown) =>
  fetch(`${stack.http.url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
const normalize = (body: unknown) => req('POST', '/mcp/normalize', body);
const mdLastSeq = async () => (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;

/** SSE messages of a replay, until it ends or `stopAfter` events have arrived (then cut). */
async function replay(cacheKey: string, lastEventId?: number, stopAfter = Infinity): Promise<SseMessage[]> {
  const got: SseMessage[] = [];
  let cut: () => void = () => {};
  const s = await openSse(
    `${stack.http.url}/mcp/caches/stream/${cacheKey}`,
    (m) => {
      got.push(m);
      if (got.filter((x) => x.event === 'message').length >= stopAfter) cut();
    },
    { 'x-api-key': key, ...(lastEventId ? { 'last-event-id': String(lastEventId) } : {}) },
  );
  expect(s.status).toBe(200);
  cut = s.abort;
  await s.done;
  return got;
}

describe('cache lifecycle', () => {
  it('creates, describes, exports, replays with resume, and deletes a cache', async () => {
    const res = await normalize({
      source: 'synthetic',
      events: simulated.map((payload) => ({ payload })),
      enable_cache: true,
    });
    expect(res.status).toBe(200);
    const out = await res.json();
    expect(out.rejected).toEqual([]);
    expect(out.events).toEqual(simulated);
    const cacheKey = out.cache_key as string;
    expect(cacheKey).toMatch(/^cache_[0-9a-f]{32}$/);
    expect(
      (
        await (
          await normalize({
            source: 'synthetic',
            events: simulated.map((payload) => ({ payload })),
            enable_cache: true,
          })
        ).json()
      ).cache_key,
    ).toBe(cacheKey);

    const stats = await (await req('GET', '/mcp/caches/stats')).json();
    const entry = stats.caches.find((c: { cache_key: string }) => c.cache_key === cacheKey);
    expect(entry).toMatchObject({ events: 400, source: 'synthetic', symbol: 'BTC' });
    expect(entry.raw_json_bytes / entry.stored_bytes).toBeCloseTo(entry.compression_ratio, 2);
    expect(stats.totals.events).toBeGreaterThanOrEqual(400);

    const manifest = await (await req('GET', `/mcp/caches/${cacheKey}/manifest`)).json();
    expect(manifest).toMatchObject({
      cache_key: cacheKey,
      source: 'synthetic',
      event_count: 400,
      first_timestamp_ms: simulated[0]?.timestamp_ms,
    });
    expect(manifest.content_hash).toMatch(/^sha256:/);
    expect(typeof manifest.normalizer_version).toBe('string');

    const file = await req('GET', `/mcp/caches/export/${cacheKey}`);
    expect(file.status).toBe(200);
    const bytes = await file.arrayBuffer();
    expect(Number(file.headers.get('content-length'))).toBe(bytes.byteLength);
    const rows = (await parquetReadObjects({ file: bytes, compressors })) as Record<string, unknown>[];
    expect(rows).toHaveLength(400);
    rows.forEach((row, i) => {
      const ev = simulated[i] as MarketEvent;
      expect([row.event_type, Number(row.timestamp_ms), row.symbol]).toEqual([
        ev.event_type,
        ev.timestamp_ms,
        ev.symbol,
      ]);
      if (ev.event_type === 'trade')
        expect([row.price, row.size, row.side, row.trade_id]).toEqual([
          ev.price,
          ev.size,
          ev.side,
          ev.trade_id,
        ]);
      else
        expect([(row.bids as { price: number }[])[0]?.price, row.best_ask]).toEqual([
          ev.bids[0]?.price,
          ev.best_ask,
        ]);
    });
    const meta = await parquetMetadataAsync(bytes);
    expect(Object.fromEntries((meta.key_value_metadata ?? []).map((e) => [e.key, e.value]))).toMatchObject({
      cache_key: cacheKey,
      row_count: '400',
    });

    const first = (await replay(cacheKey, undefined, 150)).filter((m) => m.event === 'message');
    const resumeFrom = Number(first.at(-1)?.id);
    const rest = await replay(cacheKey, resumeFrom);
    expect(rest.at(-1)).toMatchObject({ event: 'end' });
    const ids = [...first, ...rest.filter((m) => m.event === 'message')].map((m) => Number(m.id));
    expect(ids).toEqual(Array.from({ length: 400 }, (_, i) => manifest.first_seq + i));
    const replayed = rest
      .filter((m) => m.event === 'message')
      .map((m) => {
        const { seq: _s, ...ev } = JSON.parse(m.data);
        return ev;
      });
    expect(replayed).toEqual(simulated.slice(400 - replayed.length));

    expect((await req('DELETE', `/mcp/caches/${cacheKey}`)).status).toBe(200);
    await expectError(await req('GET', `/mcp/caches/${cacheKey}/manifest`), 404, 'not_found');
    await expectError(await req('GET', `/mcp/caches/export/${cacheKey}`), 404, 'not_found');
    await expectError(await req('GET', `/mcp/caches/stream/${cacheKey}`), 404, 'not_found');
    await expectError(await req('DELETE', `/mcp/caches/${cacheKey}`), 404, 'not_found');
  });

  it('clears every cache only with confirm=true exactly', async () => {
    await normalize({
      source: 'synthetic',
      events: simulated.slice(0, 5).map((payload) => ({ payload })),
      enable_cache: true,
    });
    await expectError(await req('DELETE', '/mcp/caches'), 400, 'invalid_params', 'confirm');
    await expectError(await req('DELETE', '/mcp/caches?confirm=yes'), 400, 'invalid_params', 'confirm');
    const cleared = await req('DELETE', '/mcp/caches?confirm=true');
    expect(cleared.status).toBe(200);
    expect((await cleared.json()).deleted).toBeGreaterThan(0);
    expect((await (await req('GET', '/mcp/caches/stats')).json()).totals.caches).toBe(0);
  });
});

describe('normalize', () => {
  it('publishes to the live stream when asked, once per content', async () => {
    const before = await mdLastSeq();
    const body = {
      source: 'synthetic',
      events: simulated.slice(0, 10).map((payload) => ({ payload })),
      stream: true,
    };
    expect((await (await normalize(body)).json()).published).toBe(10);
    await normalize(body);
    expect(await mdLastSeq()).toBe(before + 10);
  });

  it.each([
    [{ source: 'nyse', events: [{ payload: {} }] }, 'source'],
    [{ source: 'binance', events: [] }, 'events'],
    [
      {
        source: 'binance',
        events: [{ payload: { e: 'trade' } }, { payload: 'nope' }],
        enable_cache: true,
        stream: true,
      },
      'events.0.payload',
    ],
    [{ source: 'binance', events: [{ payload: {} }], colour: 'red' }, 'colour'],
  ])('refuses %j with 422 naming %s, caching and publishing nothing', async (body, field) => {
    const before = await mdLastSeq();
    const caches = (await (await req('GET', '/mcp/caches/stats')).json()).totals.caches;
    await expectError(await normalize(body), 422, 'unprocessable', field);
    expect(await mdLastSeq()).toBe(before);
    expect((await (await req('GET', '/mcp/caches/stats')).json()).totals.caches).toBe(caches);
  });

  it('refuses malformed JSON with 400 and an over-1 MB body with 413', async () => {
    await expectError(await normalize('{"source":'), 400, 'parse_error');
    await expectError(
      await normalize({ source: 'binance', events: [{ payload: { x: 'y'.repeat(1_100_000) } }] }),
      413,
      'payload_too_large',
    );
  });
});
