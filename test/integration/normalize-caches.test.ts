/**
 * Normalization and caches on the real app: the cache lifecycle (create → stats → manifest →
 * Parquet export read back by hyparquet → SSE replay resumed midway → delete → 404), caches that
 * belong to their account (another account's key gets 404 everywhere and clears only its own),
 * publishing into the caller's own subject space (never the platform's feed, once per content
 * at any distance in time), and bad input that caches and publishes nothing.
 */
import { Kvm } from '@nats-io/kv';
import { parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash } from '../../contracts/caches.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { MD_ALL, ownAccountFilter, ownSubject } from '../../contracts/subjects.ts';
import { encode } from '../../platform/msgpack.ts';
import { parseMarketModelConfig } from '../../producers/simulator/config.ts';
import { simulateBlock } from '../../producers/simulator/market.ts';
import { expectError } from '../support/http.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq, storedCount } from '../support/stored-seqs.ts';

let stack: TestStack;
let key: string;
let accountId: string;
/** Another account's key with the same scope. */
let otherKey: string;
/** The attacker: a Basic key whose only scope is `metrics`. */
let metricsKey: string;
const simulated: MarketEvent[] = simulateBlock(parseMarketModelConfig({ symbol: 'BTC', seed: 4 }), 0).slice(
  0,
  400,
);

beforeAll(async () => {
  stack = await startStack();
  ({ key, accountId } = await stack.accounts.key('pro', { scopes: ['mcp'] }));
  otherKey = (await stack.accounts.key('quant', { scopes: ['mcp'] })).key;
  metricsKey = (await stack.accounts.key('basic', { scopes: ['metrics'] })).key;
});

afterAll(async () => {
  await stack?.close();
});

const req = (method: string, path: string, body?: unknown, as = key) =>
  fetch(`${stack.http.url}${path}`, {
    method,
    headers: { 'x-api-key': as, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
const normalize = (body: unknown) => req('POST', '/mcp/normalize', body);

/** `tools/call` over plain JSON-RPC: the JSON-RPC response, with the tool's result parsed. */
async function callTool(as: string, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${stack.http.url}/mcp`, {
    method: 'POST',
    headers: { 'x-api-key': as, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const body = await res.json();
  const text = body.result?.content?.[0]?.text;
  return { error: body.error, isError: body.result?.isError, value: text ? JSON.parse(text) : undefined };
}

/** A Binance trade at `price` (the forged BTCUSDT print at 1.00). */
const binanceTrade = (t: number, price = '1.00') => ({
  payload: {
    e: 'trade',
    E: 1_700_000_000_000 + t,
    s: 'BTCUSDT',
    t,
    p: price,
    q: '0.5',
    T: 1_700_000_000_000 + t,
    m: false,
  },
});

/** Events stored on MD and OWN together: anything published to either moves it. */
const storedTotal = async (): Promise<number> =>
  (await lastSeq(stack.nats)) + (await stack.nats.jsm.streams.info(STREAMS.OWN)).state.last_seq;

/**
 * Shrinks OWN's duplicate window and waits (polling, no fixed sleep) until a probe message id is
 * accepted again: from then on JetStream itself would store any repeated message id.
 */
async function outliveDuplicateWindow(): Promise<void> {
  const info = await stack.nats.jsm.streams.info(STREAMS.OWN);
  await stack.nats.jsm.streams.update(STREAMS.OWN, { ...info.config, duplicate_window: 100_000_000 });
  const probe = `probe-${Date.now()}`;
  const subject = 'own.acc_probe.synthetic.PROBE.trade';
  await stack.nats.js.publish(subject, encode({}), { msgID: probe });
  const deadline = Date.now() + 10_000;
  while ((await stack.nats.js.publish(subject, encode({}), { msgID: probe })).duplicate) {
    if (Date.now() > deadline) throw new Error('the duplicate window did not pass');
    await new Promise((r) => setImmediate(r));
  }
}

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

    // The first connection is cut after 150 events (whatever else was in flight is not read), the
    // second resumes from the last one read: it must deliver the remaining 250, no more, no less.
    const first = (await replay(cacheKey, undefined, 150)).filter((m) => m.event === 'message').slice(0, 150);
    expect(first).toHaveLength(150);
    const resumeFrom = Number(first.at(-1)?.id);
    const rest = await replay(cacheKey, resumeFrom);
    expect(rest.at(-1)).toMatchObject({ event: 'end' });
    const resumed = rest.filter((m) => m.event === 'message');
    expect(resumed).toHaveLength(400 - 150);
    const ids = [...first, ...resumed].map((m) => Number(m.id));
    expect(ids).toEqual(Array.from({ length: 400 }, (_, i) => manifest.first_seq + i));
    const replayed = resumed.map((m) => {
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
    const before = await storedTotal();
    const body = {
      source: 'synthetic',
      events: simulated.slice(0, 10).map((payload) => ({ payload })),
      stream: true,
    };
    expect((await (await normalize(body)).json()).published).toBe(10);
    await normalize(body);
    expect(await storedTotal()).toBe(before + 10);
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
    const before = await storedTotal();
    const caches = (await (await req('GET', '/mcp/caches/stats')).json()).totals.caches;
    await expectError(await normalize(body), 422, 'unprocessable', field);
    expect(await storedTotal()).toBe(before);
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

describe('caches belong to their account', () => {
  it("hides one account's caches from another: stats, manifest, export, stream, delete and clear-all", async () => {
    const mine = (
      await (
        await normalize({
          source: 'synthetic',
          events: simulated.slice(0, 20).map((payload) => ({ payload })),
          enable_cache: true,
        })
      ).json()
    ).cache_key as string;
    // The other account caches the very same events: a cache of its own, under another key.
    const theirs = (
      await (
        await req(
          'POST',
          '/mcp/normalize',
          {
            source: 'synthetic',
            events: simulated.slice(0, 20).map((payload) => ({ payload })),
            enable_cache: true,
          },
          otherKey,
        )
      ).json()
    ).cache_key as string;
    expect(theirs).not.toBe(mine);

    const listed = async (as: string) =>
      (
        (await (await req('GET', '/mcp/caches/stats', undefined, as)).json()).caches as {
          cache_key: string;
        }[]
      ).map((c) => c.cache_key);
    expect(await listed(key)).toContain(mine);
    expect(await listed(key)).not.toContain(theirs);
    expect(await listed(otherKey)).toEqual([theirs]);

    for (const path of [
      `/mcp/caches/${mine}/manifest`,
      `/mcp/caches/export/${mine}`,
      `/mcp/caches/stream/${mine}`,
    ])
      await expectError(await req('GET', path, undefined, otherKey), 404, 'not_found');
    await expectError(await req('DELETE', `/mcp/caches/${mine}`, undefined, otherKey), 404, 'not_found');
    for (const tool of ['get_cache_manifest', 'export_cache', 'stream_cache', 'delete_cache'])
      expect(await callTool(otherKey, tool, { cache_key: mine })).toMatchObject({
        isError: true,
        value: { error: 'not_found' },
      });

    const cleared = await req('DELETE', '/mcp/caches?confirm=true', undefined, otherKey);
    expect(await cleared.json()).toEqual({ deleted: 1 });
    expect(await listed(otherKey)).toEqual([]);
    const manifest = await req('GET', `/mcp/caches/${mine}/manifest`);
    expect(manifest.status).toBe(200);
    const replayed = (await replay(mine)).filter((m) => m.event === 'message');
    expect(replayed).toHaveLength(20);
  });

  it('answers an unknown or malformed cache key with 404 and the error body on every route and tool', async () => {
    const keys = [
      'cache_0123456789abcdef0123456789abcdef',
      'nope',
      'cache_XYZ',
      'CACHE_0123456789ABCDEF0123456789ABCDEF',
    ];
    for (const k of keys) {
      for (const path of [`/mcp/caches/${k}/manifest`, `/mcp/caches/export/${k}`, `/mcp/caches/stream/${k}`])
        await expectError(await req('GET', path), 404, 'not_found');
      await expectError(await req('DELETE', `/mcp/caches/${k}`), 404, 'not_found');
      for (const tool of ['get_cache_manifest', 'export_cache', 'stream_cache', 'delete_cache'])
        expect(await callTool(key, tool, { cache_key: k })).toMatchObject({
          isError: true,
          value: { error: 'not_found', request_id: expect.stringMatching(/^req_/) },
        });
    }
  });

  it("gives export_cache a download URL that the calling key may fetch and no other account's key", async () => {
    const cacheKey = (
      await (
        await normalize({
          source: 'synthetic',
          events: simulated.slice(0, 30).map((payload) => ({ payload })),
          enable_cache: true,
        })
      ).json()
    ).cache_key as string;
    const { value } = await callTool(key, 'export_cache', { cache_key: cacheKey });
    expect(value.download_url).toBe(`${stack.http.url}/mcp/caches/export/${cacheKey}`);
    const file = await fetch(value.download_url, { headers: { 'x-api-key': key } });
    expect(file.status).toBe(200);
    expect(await parquetReadObjects({ file: await file.arrayBuffer(), compressors })).toHaveLength(30);
    await expectError(
      await fetch(value.download_url, { headers: { 'x-api-key': otherKey } }),
      404,
      'not_found',
    );
    // A key without `mcp` can neither ask for the link nor use it.
    expect((await callTool(metricsKey, 'export_cache', { cache_key: cacheKey })).error).toMatchObject({
      code: -32002,
    });
  });
});

describe("the platform's feed carries only the platform's producers", () => {
  it("refuses the issue's attack: a metrics-only Basic key cannot call normalize_events", async () => {
    const before = await storedTotal();
    const r = await callTool(metricsKey, 'normalize_events', {
      source: 'binance',
      events: [binanceTrade(1)],
      stream: true,
    });
    expect(r.error).toMatchObject({ code: -32002, message: expect.stringMatching(/mcp scope/) });
    expect(await storedTotal()).toBe(before);
  });

  it("publishes a caller's events on OWN under its account, none on the platform's MD", async () => {
    const platformBefore = await storedCount(stack.nats, STREAMS.MD, MD_ALL);
    const mineBefore = await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(accountId));
    const r = await callTool(key, 'normalize_events', {
      source: 'binance',
      events: [binanceTrade(2), binanceTrade(3)],
      stream: true,
    });
    expect(r.value.published).toBe(2);
    expect(await storedCount(stack.nats, STREAMS.MD, MD_ALL)).toBe(platformBefore);
    expect(await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(accountId))).toBe(mineBefore + 2);
    expect(
      await storedCount(stack.nats, STREAMS.OWN, `own.${accountId}.binance.BTCUSDT.trade`),
    ).toBeGreaterThanOrEqual(2);
  });

  it('publishes a repeated request nothing twice, even after the duplicate window has passed', async () => {
    const body = {
      source: 'binance',
      events: [binanceTrade(10), binanceTrade(11), binanceTrade(12)],
      stream: true,
    };
    expect((await (await normalize(body)).json()).published).toBe(3);
    const after = await storedTotal();
    await outliveDuplicateWindow();
    const probes = await storedTotal();
    expect(probes).toBeGreaterThan(after);
    const again = [
      await (await normalize(body)).json(),
      (await callTool(key, 'normalize_events', body)).value,
    ];
    expect(await storedTotal()).toBe(probes);
    expect(again.map((r) => r.published)).toEqual([0, 0]);
  });

  it('finishes a publish that another request left half done, storing only the missing events', async () => {
    const body = {
      source: 'binance',
      events: [binanceTrade(20), binanceTrade(21), binanceTrade(22)],
      stream: true,
    };
    // What a request that died after one event leaves behind: its pending record and one message.
    const { events } = await (await normalize({ ...body, stream: false })).json();
    const batchId = contentHash(events).slice(7, 39);
    const kv = await new Kvm(stack.nats.js).open(KV_BUCKETS.publishedBatches);
    const fromSeq = (await stack.nats.jsm.streams.info(STREAMS.OWN)).state.last_seq + 1;
    await kv.create(
      `${accountId}.${batchId}`,
      encode({ state: 'pending', from_seq: fromSeq, at: Date.now() }),
    );
    await stack.nats.js.publish(
      ownSubject(accountId, 'binance', 'BTCUSDT', 'trade'),
      encodeStoredEvent(events[0]),
      {
        msgID: `norm.${accountId}.${batchId}.0`,
      },
    );
    await outliveDuplicateWindow();
    const mineBefore = await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(accountId));
    expect((await (await normalize(body)).json()).published).toBe(2);
    expect(await storedCount(stack.nats, STREAMS.OWN, ownAccountFilter(accountId))).toBe(mineBefore + 2);
    expect((await (await normalize(body)).json()).published).toBe(0);
  });
});
