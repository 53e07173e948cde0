// https://github.com/binance/binance-spot-api-docs/blob/master/web-socket-streams.md
// https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams
/**
 * Binance spot and USD-M futures: trade, aggTrade, bookTicker, partial depth, REST depth snapshot,
 * diff depth, raw or inside the combined-stream wrapper `{stream, data}`. Diff depth gives a book
 * event with `is_snapshot: false` (zero-size levels kept, best fields null); the others are snapshots.
 */
import type { MarketEvent, Side } from '../../../contracts/events.ts';
import { book, trade, tupleLevels } from '../canonical.ts';
import { NormalizeError } from '../errors.ts';
import {
  epochMs,
  fieldError,
  integerId,
  isObject,
  isPositive,
  type Json,
  positive,
  symbolOf,
  toNumber,
} from '../fields.ts';
import type { MapContext, Mapper } from '../mapper.ts';

/** Valid Binance events that are not trades or books: they yield nothing. */
const NOT_MARKET_DATA = new Set([
  'markPriceUpdate',
  'indexPriceUpdate',
  '24hrTicker',
  '24hrMiniTicker',
  'kline',
  'continuous_kline',
  'forceOrder',
  'contractInfo',
  'assetIndexUpdate',
]);

/** Partial book depth stream names (`btcusdt@depth5`, `@depth20@100ms`): top-N snapshots. */
const PARTIAL_DEPTH = /@depth\d+/;

/** Milliseconds; `timeUnit=MICROSECOND` streams send µs (≈1e15), brought back to ms. */
function binanceMs(value: unknown, field: string): number {
  const n = epochMs(value, field);
  return n >= 1e14 ? Math.floor(n / 1_000) : n;
}

/** Inverted: `m` says whether the BUYER was the maker, so `m: true` means the aggressor sold. */
function aggressor(m: unknown): Side {
  if (m === true) return 'sell';
  if (m === false) return 'buy';
  throw fieldError(m, 'm', 'a boolean (buyer is maker)');
}

/** The payload symbol, else the one in the combined stream name (`btcusdt@trade` → BTCUSDT). */
function rawSymbol(msg: Json, stream: string | undefined): unknown {
  if (msg.s !== undefined || stream === undefined) return msg.s;
  const at = stream.indexOf('@');
  return at > 0 ? stream.slice(0, at).toUpperCase() : undefined;
}

function tradeId(msg: Json): string {
  if (msg.e === 'trade') return integerId(msg.t, 't');
  if (msg.a !== undefined) return integerId(msg.a, 'a');
  // Early futures aggTrade recordings lack `a`: name the aggregate by its trade-id range.
  const first = integerId(msg.f, 'f');
  const last = integerId(msg.l, 'l');
  return first === last ? first : `${first}-${last}`;
}

function mapTrade(msg: Json, stream: string | undefined, ctx: MapContext): MarketEvent | undefined {
  // Futures insurance-fund and ADL fills are off-book transfers, not market trades.
  if (msg.X !== undefined && msg.X !== 'MARKET') return undefined;
  const ts = binanceMs(msg.T, 'T');
  return trade(
    'binance',
    symbolOf(ctx, rawSymbol(msg, stream), 's'),
    ts,
    ts,
    aggressor(msg.m),
    positive(msg.p, 'p'),
    positive(msg.q, 'q'),
    tradeId(msg),
  );
}

function mapBookTicker(msg: Json, stream: string | undefined, ctx: MapContext): MarketEvent {
  const ts = msg.E === undefined ? ctx.receivedAtMs : binanceMs(msg.E, 'E');
  const bidSize = positiveOrZero(msg.B, 'B');
  const askSize = positiveOrZero(msg.A, 'A');
  return book(
    'binance',
    symbolOf(ctx, rawSymbol(msg, stream), 's'),
    ts,
    ts,
    bidSize > 0 ? [{ price: positive(msg.b, 'b'), size: bidSize }] : [],
    askSize > 0 ? [{ price: positive(msg.a, 'a'), size: askSize }] : [],
    true,
  );
}

/** A size ≥ 0 (0: an empty side), parsed once. */
function positiveOrZero(value: unknown, field: string): number {
  const n = toNumber(value);
  if (n === 0 || isPositive(n)) return n;
  throw fieldError(value, field, 'a positive number');
}

/**
 * `depthUpdate`: inside a wrapper whose stream is `<s>@depth<N>…` it is a USD-M partial depth frame
 * (a top-N snapshot); otherwise a diff (levels to change, qty 0 = delete the level).
 */
function mapDepthUpdate(msg: Json, stream: string | undefined, ctx: MapContext): MarketEvent {
  const snapshot = stream !== undefined && PARTIAL_DEPTH.test(stream);
  const ts = binanceMs(msg.E, 'E');
  const symbol = symbolOf(ctx, rawSymbol(msg, stream), 's');
  const bids = tupleLevels(msg.b, 'b', !snapshot);
  const asks = tupleLevels(msg.a, 'a', !snapshot);
  return book('binance', symbol, ts, ts, bids, asks, snapshot);
}

/** REST `GET /api/v3/depth` / `/fapi/v1/depth` and spot partial depth: `{lastUpdateId, bids, asks}`. */
function mapSnapshot(msg: Json, stream: string | undefined, ctx: MapContext): MarketEvent {
  const time = msg.E ?? msg.T;
  const ts = time === undefined ? ctx.receivedAtMs : binanceMs(time, msg.E === undefined ? 'T' : 'E');
  const symbol = symbolOf(ctx, rawSymbol(msg, stream), 'symbol');
  const bids = tupleLevels(msg.bids, 'bids', false);
  return book('binance', symbol, ts, ts, bids, tupleLevels(msg.asks, 'asks', false), true);
}

function mapOne(msg: Json, stream: string | undefined, ctx: MapContext): MarketEvent | undefined {
  switch (msg.e) {
    case 'trade':
    case 'aggTrade':
      return mapTrade(msg, stream, ctx);
    case 'depthUpdate':
      return mapDepthUpdate(msg, stream, ctx);
    case 'bookTicker':
      return mapBookTicker(msg, stream, ctx);
    case undefined:
      if (msg.bids !== undefined || msg.asks !== undefined) return mapSnapshot(msg, stream, ctx);
      if (msg.B !== undefined && msg.A !== undefined) return mapBookTicker(msg, stream, ctx);
      if ('result' in msg && 'id' in msg) return undefined; // subscription acknowledgement
      break;
    default:
      if (typeof msg.e === 'string' && NOT_MARKET_DATA.has(msg.e)) return undefined;
  }
  const what =
    typeof msg.e === 'string' ? `event type "${msg.e.slice(0, 40)}"` : 'message without a known shape';
  throw new NormalizeError(
    'unsupported_payload',
    `binance: ${what} is not supported (trade, aggTrade, bookTicker, depthUpdate, depth snapshot)`,
  );
}

export const binanceMapper: Mapper = {
  source: 'binance',
  map(payload, ctx, out) {
    let msg = payload;
    let stream: string | undefined;
    if (isObject(payload) && typeof payload.stream === 'string' && 'data' in payload) {
      stream = payload.stream;
      msg = payload.data;
    }
    if (isObject(msg)) {
      const event = mapOne(msg, stream, ctx);
      if (event !== undefined) out.push(event);
      return;
    }
    // All-market streams (`!markPrice@arr`, …) send arrays of events.
    if (!Array.isArray(msg)) throw fieldError(msg, stream === undefined ? 'payload' : 'data', 'an object');
    for (let i = 0; i < msg.length; i++) {
      const item = msg[i];
      if (!isObject(item)) throw fieldError(item, `[${i}]`, 'an object');
      const event = mapOne(item, stream, ctx);
      if (event !== undefined) out.push(event);
    }
  },
};
