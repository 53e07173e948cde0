// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions
/**
 * Hyperliquid: `trades` (one event per fill), `l2Book`, `bbo`, each as a WebSocket `{channel, data}`
 * push or bare (the `/info` l2Book response is a bare WsBook). Funding and mids yield nothing.
 */
import type { BookLevel, MarketEvent, Side } from '../../../contracts/events.ts';
import { book, trade } from '../canonical.ts';
import { NormalizeError } from '../errors.ts';
import {
  array,
  epochMs,
  fieldError,
  integerId,
  isObject,
  isPositive,
  type Json,
  positive,
  symbolOf,
  toNumber,
  within,
} from '../fields.ts';
import type { MapContext, Mapper } from '../mapper.ts';

/** Valid channels that carry no trade or book: they yield nothing. */
const NOT_MARKET_DATA = new Set([
  'subscriptionResponse',
  'pong',
  'activeAssetCtx',
  'allMids',
  'candle',
  'notification',
  'webData2',
  'post',
  'error',
]);

/** `side` is the aggressor's: B = the bid side took (buyer), A = the ask side (seller). */
function aggressor(side: unknown, field: string): Side {
  if (side === 'B') return 'buy';
  if (side === 'A') return 'sell';
  throw fieldError(side, field, '"B" or "A"');
}

function mapTrade(raw: unknown, ctx: MapContext): MarketEvent {
  if (!isObject(raw)) throw fieldError(raw, 'trade', 'a WsTrade object');
  const ts = epochMs(raw.time, 'time');
  return trade(
    'hyperliquid',
    symbolOf(ctx, raw.coin, 'coin'),
    ts,
    ts,
    aggressor(raw.side, 'side'),
    positive(raw.px, 'px'),
    positive(raw.sz, 'sz'),
    integerId(raw.tid, 'tid'),
  );
}

/** The fills of a trades message (or a bare array), one event each. */
function mapTrades(fills: unknown[], prefix: string, ctx: MapContext, out: MarketEvent[]): void {
  for (let i = 0; i < fills.length; i++) {
    const fill = fills[i];
    if (prefix === '' && isObject(fill) && fill.fundingRate !== undefined) continue; // fundingHistory row
    let event: MarketEvent;
    try {
      event = mapTrade(fill, ctx);
    } catch (error) {
      throw within(`${prefix}[${i}]`, error);
    }
    out.push(event);
  }
}

/** WsLevel `{px, sz, n}` of a snapshot; zero-size levels are left out. */
function levels(raw: unknown, field: string): BookLevel[] {
  const list = array(raw, field);
  // Sized once (a growing array reallocates twice for 20 levels); trimmed if zero sizes were left out.
  const out: BookLevel[] = new Array(list.length);
  let k = 0;
  for (let i = 0; i < list.length; i++) {
    const level = list[i];
    if (!isObject(level)) throw fieldError(level, `${field}[${i}]`, 'a {px, sz, n} level');
    // Inline checks: field names are only built for an error.
    const price = toNumber(level.px);
    if (!isPositive(price)) throw fieldError(level.px, `${field}[${i}].px`, 'a positive number');
    const size = toNumber(level.sz);
    if (isPositive(size)) out[k++] = { price, size };
    else if (size !== 0) throw fieldError(level.sz, `${field}[${i}].sz`, 'a number >= 0');
  }
  if (k < out.length) out.length = k;
  return out;
}

function mapBook(data: Json, ctx: MapContext): MarketEvent {
  const sides = array(data.levels, 'levels');
  const ts = epochMs(data.time, 'time');
  const symbol = symbolOf(ctx, data.coin, 'coin');
  return book(
    'hyperliquid',
    symbol,
    ts,
    ts,
    levels(sides[0], 'levels[0]'),
    levels(sides[1], 'levels[1]'),
    true,
  );
}

/**
 * One bbo side. A module-level function, not a closure in `mapBbo`: under tsx (keepNames) every
 * closure creation pays a `__name` defineProperty, which cost bbo most of its time.
 */
function bboSide(level: unknown, field: string): BookLevel[] {
  return level == null ? [] : levels([level], field);
}

/** `bbo: [bid | null, ask | null]`: a missing side gives an empty side (its best price null). */
function mapBbo(data: Json, ctx: MapContext): MarketEvent {
  const [bid, ask] = array(data.bbo, 'bbo');
  const ts = epochMs(data.time, 'time');
  const symbol = symbolOf(ctx, data.coin, 'coin');
  return book('hyperliquid', symbol, ts, ts, bboSide(bid, 'bbo[0]'), bboSide(ask, 'bbo[1]'), true);
}

function unsupported(what: string): NormalizeError {
  return new NormalizeError(
    'unsupported_payload',
    `hyperliquid: ${what} is not supported (trades, l2Book, bbo, or a bare WsTrade[] / WsBook / WsBbo)`,
  );
}

/** A bare message: WsBook (info l2Book), WsBbo, WsTrade, or an array (trades, fundingHistory rows). */
function mapBare(data: unknown, ctx: MapContext, out: MarketEvent[]): void {
  if (Array.isArray(data)) {
    mapTrades(data, '', ctx, out);
    return;
  }
  if (!isObject(data)) throw fieldError(data, 'payload', 'an object');
  if (data.levels !== undefined) out.push(mapBook(data, ctx));
  else if (data.bbo !== undefined) out.push(mapBbo(data, ctx));
  else if (data.tid !== undefined && data.px !== undefined) out.push(mapTrade(data, ctx));
  else throw unsupported('a message without a known shape');
}

export const hyperliquidMapper: Mapper = {
  source: 'hyperliquid',
  map(payload, ctx, out) {
    if (!isObject(payload) || typeof payload.channel !== 'string') {
      mapBare(payload, ctx, out);
      return;
    }
    const { channel, data } = payload;
    switch (channel) {
      case 'trades':
        mapTrades(array(data, 'data'), 'data', ctx, out);
        return;
      case 'l2Book':
        if (!isObject(data)) throw fieldError(data, 'data', 'a WsBook object');
        out.push(mapBook(data, ctx));
        return;
      case 'bbo':
        if (!isObject(data)) throw fieldError(data, 'data', 'a WsBbo object');
        out.push(mapBbo(data, ctx));
        return;
      default:
        if (!NOT_MARKET_DATA.has(channel)) throw unsupported(`channel "${channel.slice(0, 40)}"`);
    }
  },
};
