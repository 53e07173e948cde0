/**
 * The tardis-machine-compatible endpoints (issue 31 §2) with a client written from tardis-machine's
 * public documentation only: `GET /replay-normalized?options=<url-encoded JSON>` read as NDJSON,
 * `/ws-replay-normalized` and `/ws-stream-normalized` read one JSON message per WebSocket message.
 * Over a known schedule of stored trades and books: the `trade` and `book_change` messages are
 * exactly the stored events of the range (stored time in [from, to)), field by field as the
 * documentation shapes them; `trade_bar_100ms` and `trade_bar_5ticks` equal bars computed here
 * from those trades by the documented rules; `book_snapshot_2_100ms` carries the top two levels of
 * the last book before each interval boundary; both WebSocket endpoints give what HTTP gives, live
 * for the stream; bad options, an unsupported data type and a missing key are refused with the
 * catalogue's codes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { STREAMS } from '../../contracts/streams.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedMs } from '../support/stored-seqs.ts';

let stack: TestStack;
let gw: TestGateway;
let key = '';
type Msg = Record<string, unknown>;
type StoredEv = { seq: number; ms: number; ev: Record<string, unknown> };
const stored: StoredEv[] = [];
let from = 0;
let to = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The documented HTTP client: options as URL-encoded JSON, the body as newline-delimited JSON. */
async function replayHttp(options: unknown, headers: Record<string, string> = { 'x-api-key': key }) {
  const res = await fetch(
    `${gw.url}/replay-normalized?options=${encodeURIComponent(JSON.stringify(options))}`,
    {
      headers,
    },
  );
  const text = await res.text();
  return {
    status: res.status,
    body: text,
    messages:
      res.status === 200
        ? text
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as Msg)
        : [],
  };
}

/** The documented WebSocket client: one JSON message per WebSocket message, until the server closes. */
function replayWs(path: string, options: unknown, until?: (m: Msg[]) => boolean) {
  const ws = new WebSocket(
    `${gw.url.replace('http', 'ws')}${path}?options=${encodeURIComponent(JSON.stringify(options))}`,
    {
      headers: { 'x-api-key': key },
    },
  );
  const messages: Msg[] = [];
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  ws.on('message', (d) => {
    messages.push(JSON.parse(d.toString()));
    if (until?.(messages)) ws.close();
  });
  const opened = new Promise((r) => ws.once('open', r));
  return { messages, closed, opened, ws };
}

const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  stack = await startStack();
  gw = await startTestGateway(stack.server.url, {}, { guard: 'keys' });
  key = (await stack.accounts.key('quant')).key;
  const first = (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
  // 160 trades and 40 books over BTC and ETH, about 8 ms apart, prices and sizes varying.
  for (let i = 0; i < 200; i++) {
    const coin = i % 2 ? 'ETH' : 'BTC';
    const now = Date.now();
    const ev =
      i % 5 === 0
        ? { ...book(coin, i, 3), timestamp_ms: now, capture_time_ms: now + 1 }
        : { ...trade(coin, i), size: 1 + (i % 7) / 10, timestamp_ms: now, capture_time_ms: now + 1 };
    await publishNow(stack.nats.js, [ev]);
    await sleep(8);
  }
  const { last_seq } = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
  for (let seq = first + 1; seq <= last_seq; seq++) {
    const m = await stack.nats.jsm.streams.getMessage(STREAMS.MD, { seq });
    if (!m) throw new Error(`missing ${seq}`);
    stored.push({ seq, ms: storedMs(m.timestamp), ev: JSON.parse(new TextDecoder().decode(m.data)) });
  }
  from = (stored[20] as StoredEv).ms;
  to = (stored[170] as StoredEv).ms;
}, 90_000);

afterAll(async () => {
  await gw?.close();
  await stack?.close();
});

const inRange = (s: StoredEv) => s.ms >= from && s.ms < to;
const btc = () => stored.filter((s) => inRange(s) && s.ev.symbol === 'BTC');

/** Bars by the documented rules: time buckets on `timestamp` (sent by the first trade of a later bucket), or every n trades. */
function expectedBars(
  trades: Record<string, unknown>[],
  rule: { time?: number; ticks?: number },
  name: string,
) {
  const bars: Msg[] = [];
  let cur: Record<string, unknown>[] = [];
  const emit = (atMs: number, closing: Record<string, unknown>) => {
    const prices = cur.map((t) => t.price as number);
    const volume = cur.reduce((a, t) => a + (t.size as number), 0);
    bars.push({
      name,
      open: prices[0],
      high: Math.max(...prices),
      low: Math.min(...prices),
      close: prices.at(-1),
      trades: cur.length,
      volume: expect.closeTo(volume, 9),
      buyVolume: expect.closeTo(
        cur.filter((t) => t.side === 'buy').reduce((a, t) => a + (t.size as number), 0),
        9,
      ),
      vwap: expect.closeTo(cur.reduce((a, t) => a + (t.price as number) * (t.size as number), 0) / volume, 9),
      openTimestamp: iso(cur[0]?.timestamp_ms as number),
      closeTimestamp: iso(cur.at(-1)?.timestamp_ms as number),
      timestamp: iso(atMs),
      localTimestamp: iso(closing.capture_time_ms as number),
    });
    cur = [];
  };
  for (const t of trades) {
    const ms = t.timestamp_ms as number;
    if (rule.time && cur.length > 0) {
      const bucket = Math.floor((cur[0]?.timestamp_ms as number) / rule.time);
      if (Math.floor(ms / rule.time) > bucket) emit((bucket + 1) * rule.time, t);
    }
    cur.push(t);
    if (rule.ticks && cur.length >= rule.ticks) emit(ms, t);
  }
  return bars;
}

describe('tardis-machine-compatible replay', () => {
  // Built when a test runs: the range is known once the schedule is stored (beforeAll).
  const opts = () => ({
    exchange: 'synthetic',
    symbols: ['BTC'],
    from: iso(from),
    to: iso(to),
    dataTypes: ['trade', 'book_change', 'trade_bar_100ms', 'trade_bar_5ticks', 'book_snapshot_2_100ms'],
  });

  it('serves trades and book changes of the range, shaped as documented', async () => {
    const { status, messages, body } = await replayHttp(opts());
    expect(status, body).toBe(200);
    const trades = btc()
      .filter((s) => s.ev.event_type === 'trade')
      .map((s) => s.ev);
    expect(messages.filter((m) => m.type === 'trade')).toEqual(
      trades.map((t) => ({
        type: 'trade',
        symbol: 'BTC',
        exchange: 'synthetic',
        id: t.trade_id,
        price: t.price,
        amount: t.size,
        side: t.side,
        timestamp: iso(t.timestamp_ms as number),
        localTimestamp: iso(t.capture_time_ms as number),
      })),
    );
    const books = btc()
      .filter((s) => s.ev.event_type === 'book')
      .map((s) => s.ev);
    expect(books.length).toBeGreaterThan(5);
    const level = (l: { price: number; size: number }) => ({ price: l.price, amount: l.size });
    expect(messages.filter((m) => m.type === 'book_change')).toEqual(
      books.map((b) => ({
        type: 'book_change',
        symbol: 'BTC',
        exchange: 'synthetic',
        isSnapshot: true,
        bids: (b.bids as { price: number; size: number }[]).map(level),
        asks: (b.asks as { price: number; size: number }[]).map(level),
        timestamp: iso(b.timestamp_ms as number),
        localTimestamp: iso(b.capture_time_ms as number),
      })),
    );
    expect(messages.some((m) => m.symbol === 'ETH')).toBe(false);
  });

  it('computes trade bars by time and by ticks as documented', async () => {
    const { messages } = await replayHttp(opts());
    const trades = btc()
      .filter((s) => s.ev.event_type === 'trade')
      .map((s) => s.ev);
    for (const [name, rule] of [
      ['trade_bar_100ms', { time: 100 }],
      ['trade_bar_5ticks', { ticks: 5 }],
    ] as const) {
      const bars = messages.filter((m) => m.type === 'trade_bar' && m.name === name);
      const want = expectedBars(trades, rule, name);
      expect(want.length).toBeGreaterThan(3);
      expect(bars).toEqual(
        want.map((b) =>
          expect.objectContaining({ ...b, type: 'trade_bar', exchange: 'synthetic', symbol: 'BTC' }),
        ),
      );
    }
  });

  it('sends book snapshots of the top levels at each interval boundary', async () => {
    const { messages } = await replayHttp(opts());
    const snaps = messages.filter((m) => m.type === 'book_snapshot');
    expect(snaps.length).toBeGreaterThan(2);
    for (const s of snaps) {
      expect(s).toMatchObject({
        name: 'book_snapshot_2_100ms',
        depth: 2,
        interval: 100,
        exchange: 'synthetic',
      });
      expect((s.bids as unknown[]).length).toBe(2);
      // The snapshot is the last book change at its timestamp, cut to two levels.
      const before = messages.slice(0, messages.indexOf(s));
      const at = [...before].reverse().find((m) => m.type === 'book_change' && m.timestamp === s.timestamp);
      if (!at) throw new Error(`no book change at ${s.timestamp} before its snapshot`);
      expect(s.bids).toEqual((at.bids as unknown[]).slice(0, 2));
      expect(s.asks).toEqual((at.asks as unknown[]).slice(0, 2));
    }
  });

  it('gives the same messages over /ws-replay-normalized, then closes 1000', async () => {
    const http = await replayHttp(opts());
    const ws = replayWs('/ws-replay-normalized', opts());
    expect(await ws.closed).toBe(1000);
    expect(ws.messages).toEqual(http.messages);
  });

  it('streams live messages over /ws-stream-normalized', async () => {
    const live = replayWs('/ws-stream-normalized', {
      exchange: 'synthetic',
      symbols: ['SOL'],
      dataTypes: ['trade'],
    });
    await live.opened;
    await sleep(200);
    await publishNow(stack.nats.js, [{ ...trade('SOL', 7), timestamp_ms: Date.now() }]);
    await eventually(() => live.messages.length > 0, 10_000, 'a live trade');
    expect(live.messages[0]).toMatchObject({
      type: 'trade',
      symbol: 'SOL',
      exchange: 'synthetic',
      id: 'trd_SOL_7',
    });
    live.ws.close();
  });

  it('refuses bad options, an unsupported data type and a missing key with the catalogue codes', async () => {
    const bad = await replayHttp({ ...opts(), dataTypes: ['book_ticker'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('invalid_params');
    expect(bad.body).toContain('book_snapshot_');
    expect((await replayHttp({ ...opts(), to: opts().from })).status).toBe(400);
    expect((await replayHttp({ ...opts(), exchange: 'ftx' })).status).toBe(400);
    expect((await replayHttp(opts(), {})).status).toBe(401);
    const ws = replayWs('/ws-replay-normalized', { ...opts(), dataTypes: ['quote'] });
    expect(await ws.closed).toBe(4400);
    expect(ws.messages[0]).toMatchObject({ type: 'error', code: 'invalid_params' });
  });
});
