/**
 * The market methods of the JSON-RPC edge against a real nats-server and the real guard:
 * `md_coins`, `md_midPrice` and `md_l2Book` from the latest-state view (fed live, warmed from the
 * log by an edge started later), `md_trades` from the log with its range rules, chain scopes, and
 * an account's own events (on `OWN`) visible to its keys only, merged with the platform's by
 * stored time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { ownSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { call, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig({ JSONRPC_TRADES_MAX_RANGE_MS: '600000', MD_MAX_AGE_S: '3600' });
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestJsonRpc;
let quant: { key: string; accountId: string };
const t0 = Date.now();

const publish = (events: MarketEvent[], subject?: (e: MarketEvent) => string) =>
  publishNow(nats.js, events, subject);

/** A trade or book of `symbol` whose event time is `at`. */
const at = <E extends MarketEvent>(e: E, ms: number): E => ({ ...e, timestamp_ms: ms, capture_time_ms: ms });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An account's own events, published straight to `OWN`. */
const ownOf = (accountId: string) => (e: MarketEvent) =>
  ownSubject(accountId, e.source, e.symbol, e.event_type);

const midOf = async (key: string, params: unknown, url = edge.url) =>
  call(url, 'md_midPrice', params, { 'x-api-key': key });

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  edge = await startTestJsonRpc(nats, config, { guard: 'keys' });
  quant = await accounts.key('quant');
  await publish([
    at(book('BTC', 1), t0),
    at(book('BTC', 7), t0 + 1),
    { ...at(book('SOL', 3), t0 + 2), source: 'hyperliquid' },
  ]);
  await eventually(async () => (await midOf(quant.key, ['BTC'])).result);
});

afterAll(async () => {
  await edge?.close();
  await base?.close();
});

describe('md_midPrice', () => {
  it('answers the newest book of the coin, by its tracked spelling', async () => {
    const answer = await midOf(quant.key, ['btc']);
    const last = book('BTC', 7);
    expect(answer.result).toEqual({
      coin: 'BTC',
      source: 'synthetic',
      mid_price: last.mid_price,
      best_bid: last.best_bid,
      best_ask: last.best_ask,
      spread_bps: last.spread_bps,
      seq: expect.any(Number),
      timestamp_ms: t0 + 1,
    });
  });

  it('takes the source as a second param, as an array or an object', async () => {
    expect((await midOf(quant.key, ['SOL', 'hyperliquid'])).result).toMatchObject({ source: 'hyperliquid' });
    expect((await midOf(quant.key, { coin: 'SOL', source: 'hyperliquid' })).result).toMatchObject({
      coin: 'SOL',
    });
    expect((await midOf(quant.key, ['SOL', 'synthetic'])).error).toMatchObject({ code: -32004 });
    expect((await midOf(quant.key, ['SOL', 'nasdaq'])).error).toMatchObject({ code: -32602 });
  });

  it('answers -32003 for a coin the feed does not track and -32004 for a tracked coin with no book yet', async () => {
    expect((await midOf(quant.key, ['NOPE'])).error).toMatchObject({
      code: -32003,
      data: { error: 'coin_not_found' },
    });
    // ETH is one of the configured coins: known before it has published anything.
    expect((await midOf(quant.key, ['ETH'])).error).toMatchObject({
      code: -32004,
      data: { error: 'feed_unavailable' },
    });
  });

  it('keeps a chain-scoped key to its chains: another source is -32002, no readable book -32004', async () => {
    const scoped = await accounts.key('basic', { scopes: ['stream:read', 'chain:hyperliquid'] });
    expect((await midOf(scoped.key, ['SOL'])).result).toMatchObject({ source: 'hyperliquid' });
    expect((await midOf(scoped.key, ['BTC', 'synthetic'])).error).toMatchObject({ code: -32002 });
    expect((await midOf(scoped.key, ['BTC'])).error).toMatchObject({ code: -32004 });
  });

  it('is answered at once by an edge started later, from the log', async () => {
    const later = await startTestJsonRpc(nats, config, { guard: 'keys' });
    try {
      const warm = (await midOf(quant.key, ['BTC'], later.url)).result;
      expect(warm).toEqual((await midOf(quant.key, ['BTC'])).result);
    } finally {
      await later.close();
    }
  });
});

describe('md_l2Book', () => {
  const l2 = (params: unknown) => call(edge.url, 'md_l2Book', params, { 'x-api-key': quant.key });

  it('answers the whole book by default and `depth` levels per side when asked', async () => {
    const full = (await l2(['BTC'])).result as { bids: unknown[]; asks: unknown[]; mid_price: number };
    expect(full.bids).toEqual(book('BTC', 7).bids);
    expect(full.asks).toEqual(book('BTC', 7).asks);
    const top = (await l2(['BTC', 2])).result as { bids: unknown[]; asks: unknown[] };
    expect(top.bids).toEqual(book('BTC', 7).bids.slice(0, 2));
    expect(top.asks).toEqual(book('BTC', 7).asks.slice(0, 2));
    expect((await l2(['SOL', null, 'hyperliquid'])).result).toMatchObject({ source: 'hyperliquid' });
  });

  it('refuses a depth above 1000 with -32007 and below 1 with -32602', async () => {
    expect((await l2(['BTC', 1001])).error).toMatchObject({
      code: -32007,
      data: { error: 'snapshot_too_large' },
    });
    expect((await l2(['BTC', 1000])).result).toBeTruthy();
    expect((await l2(['BTC', 0])).error).toMatchObject({ code: -32602 });
    expect((await l2(['BTC', 2.5])).error).toMatchObject({ code: -32602 });
  });
});

describe('md_coins', () => {
  it('lists the coins with their sources and last event time', async () => {
    const coins = (await call(edge.url, 'md_coins', [], { 'x-api-key': quant.key })).result as {
      coin: string;
      sources: { source: string; last_event_ms: number | null }[];
      last_event_ms: number | null;
    }[];
    expect(coins.find((c) => c.coin === 'BTC')).toEqual({
      coin: 'BTC',
      sources: [{ source: 'synthetic', last_event_ms: t0 + 1 }],
      last_event_ms: t0 + 1,
    });
    expect(coins.find((c) => c.coin === 'SOL')?.sources).toEqual([
      { source: 'hyperliquid', last_event_ms: t0 + 2 },
    ]);
    expect(coins.find((c) => c.coin === 'ETH')).toEqual({ coin: 'ETH', sources: [], last_event_ms: null });
  });
});

describe('md_trades', () => {
  const start = Date.now();
  const trades = (key: string, params: unknown) => call(edge.url, 'md_trades', params, { 'x-api-key': key });

  beforeAll(async () => {
    await publish(Array.from({ length: 20 }, (_, i) => at(trade('HYPE', i), start + i * 10)));
  });

  it('answers the trades of the range from the log, oldest first, each with its seq', async () => {
    const answer = (await trades(quant.key, ['HYPE', start + 50, start + 120])).result as {
      coin: string;
      truncated: boolean;
      trades: { seq: number; timestamp_ms: number; trade_id: string }[];
    };
    expect(answer).toMatchObject({
      coin: 'HYPE',
      truncated: false,
      start_ms: start + 50,
      end_ms: start + 120,
    });
    expect(answer.trades.map((t) => t.timestamp_ms)).toEqual(
      [5, 6, 7, 8, 9, 10, 11, 12].map((i) => start + i * 10),
    );
    const seqs = answer.trades.map((t) => t.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it('stops at `limit` and says the list is truncated', async () => {
    const answer = (await trades(quant.key, ['HYPE', start, start + 1_000, 3])).result as {
      truncated: boolean;
      trades: { timestamp_ms: number }[];
    };
    expect(answer.truncated).toBe(true);
    expect(answer.trades.map((t) => t.timestamp_ms)).toEqual([start, start + 10, start + 20]);
  });

  it('answers -32008 for end before start, a range over the cap, and a start before retention', async () => {
    for (const [params, field] of [
      [['HYPE', start, start - 1], 'end_ms'],
      [['HYPE', start, start + 600_001], 'max_range_ms'],
      [['HYPE', start - 2 * 3_600_000, start - 2 * 3_600_000 + 10], 'retained_from_ms'],
    ] as const) {
      const answer = await trades(quant.key, params);
      expect(answer.error, JSON.stringify(params)).toMatchObject({
        code: -32008,
        data: { error: 'invalid_time_range' },
      });
      expect(answer.error?.data, field).toHaveProperty(field);
    }
    expect((await trades(quant.key, ['NOPE', start, start + 1])).error).toMatchObject({ code: -32003 });
  });

  it('shows an account its own trades and no other account', async () => {
    const owner = await accounts.key('pro');
    const other = await accounts.key('pro');
    const ownStart = Date.now();
    await publish([at(trade('MYCOIN', 1), ownStart)], ownOf(owner.accountId));
    const mine = (await trades(owner.key, ['MYCOIN', ownStart - 10, ownStart + 10])).result as {
      trades: { seq: number; own?: boolean }[];
    };
    expect(mine.trades).toHaveLength(1);
    // Read from OWN: its sequence there, marked `own`.
    expect(mine.trades[0]).toMatchObject({ seq: await lastSeq(nats, STREAMS.OWN), own: true });
    expect((await trades(other.key, ['MYCOIN', ownStart - 10, ownStart + 10])).error).toMatchObject({
      code: -32003,
    });
  });

  it('merges an account’s own trades of a platform coin with the platform’s, by stored time', async () => {
    const owner = await accounts.key('pro');
    const other = await accounts.key('pro');
    // After every HYPE trade published above (their times are `start` + up to 190 ms).
    await sleep(250);
    const t = Date.now();
    await publish([at(trade('HYPE', 900), t)]);
    await sleep(5);
    await publish([at(trade('HYPE', 901), t + 1)], ownOf(owner.accountId));
    await publish([at(trade('HYPE', 902), t + 1)], ownOf(other.accountId));
    await sleep(5);
    await publish([at(trade('HYPE', 903), t + 2)]);
    type Answer = { truncated: boolean; trades: { trade_id: string; own?: boolean }[] };
    const idsOf = (a: Answer) => a.trades.map((x) => [x.trade_id, x.own ?? false]);
    const mine = (await trades(owner.key, ['HYPE', t, t + 2])).result as Answer;
    expect(idsOf(mine)).toEqual([
      [trade('HYPE', 900).trade_id, false],
      [trade('HYPE', 901).trade_id, true],
      [trade('HYPE', 903).trade_id, false],
    ]);
    expect(mine.truncated).toBe(false);
    const page = (await trades(owner.key, ['HYPE', t, t + 2, 2])).result as Answer;
    expect(idsOf(page)).toEqual(idsOf(mine).slice(0, 2));
    expect(page.truncated).toBe(true);
    const theirs = (await trades(other.key, ['HYPE', t, t + 2])).result as Answer;
    expect(idsOf(theirs)).toEqual([
      [trade('HYPE', 900).trade_id, false],
      [trade('HYPE', 902).trade_id, true],
      [trade('HYPE', 903).trade_id, false],
    ]);
    // A key with no own events in the range: the platform's only.
    expect(idsOf((await trades(quant.key, ['HYPE', t, t + 2])).result as Answer)).toEqual([
      [trade('HYPE', 900).trade_id, false],
      [trade('HYPE', 903).trade_id, false],
    ]);
  });
});
