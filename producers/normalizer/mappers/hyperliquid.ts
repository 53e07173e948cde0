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
  type Json,
  nonNegative,
  positive,
  symbolOf,
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

function mapTrade(raw: unknown, i: number, ctx: MapContext): MarketEvent {
  const at = `data[${i}]`;
  if (!isObject(raw)) throw fieldError(raw, at, 'a WsTrade object');
  const ts = epochMs(raw.time, `${at}.time`);
  return trade(
    'hyperliquid',
    symbolOf(ctx, raw.coin, `${at}.coin`),
    ts,
    ts,
    aggressor(raw.side, `${at}.side`),
    positive(raw.px, `${at}.px`),
    positive(raw.sz, `${at}.sz`),
    integerId(raw.tid, `${at}.tid`),
  );
}

/** WsLevel `{px, sz, n}`; zero-size levels are left out. */
function levels(raw: unknown, field: string): BookLevel[] {
  const list = array(raw, field);
  const out: BookLevel[] = [];
  for (let i = 0; i < list.length; i++) {
    const level = list[i];
    if (!isObject(level)) throw fieldError(level, `${field}[${i}]`, 'a {px, sz, n} level');
    const price = positive(level.px, `${field}[${i}].px`);
    const size = nonNegative(level.sz, `${field}[${i}].sz`);
    if (size > 0) out.push({ price, size });
  }
  return out;
}

function mapBook(data: Json, ctx: MapContext): MarketEvent {
  const sides = array(data.levels, 'levels');
  const ts = epochMs(data.time, 'time');
  const symbol = symbolOf(ctx, data.coin, 'coin');
  return book('hyperliquid', symbol, ts, ts, levels(sides[0], 'levels[0]'), levels(sides[1], 'levels[1]'));
}

/** `bbo: [bid | null, ask | null]`: a missing side gives incomplete_book. */
function mapBbo(data: Json, ctx: MapContext): MarketEvent {
  const [bid, ask] = array(data.bbo, 'bbo');
  const ts = epochMs(data.time, 'time');
  const symbol = symbolOf(ctx, data.coin, 'coin');
  const side = (level: unknown, field: string): BookLevel[] => (level == null ? [] : levels([level], field));
  return book('hyperliquid', symbol, ts, ts, side(bid, 'bbo[0]'), side(ask, 'bbo[1]'));
}

function unsupported(what: string): NormalizeError {
  return new NormalizeError(
    'unsupported_payload',
    `hyperliquid: ${what} is not supported (trades, l2Book, bbo, or a bare WsTrade[] / WsBook / WsBbo)`,
  );
}

/** A bare message: WsBook (info l2Book), WsBbo, WsTrade, or an array (trades, fundingHistory rows). */
function* mapBare(data: unknown, ctx: MapContext): Generator<MarketEvent> {
  if (Array.isArray(data)) {
    for (let i = 0; i < data.length; i++) {
      const item = data[i];
      if (isObject(item) && item.fundingRate !== undefined) continue; // fundingHistory row
      yield mapTrade(item, i, ctx);
    }
    return;
  }
  if (!isObject(data)) throw fieldError(data, 'payload', 'an object');
  if (data.levels !== undefined) yield mapBook(data, ctx);
  else if (data.bbo !== undefined) yield mapBbo(data, ctx);
  else if (data.tid !== undefined && data.px !== undefined) yield mapTrade(data, 0, ctx);
  else throw unsupported('a message without a known shape');
}

export const hyperliquidMapper: Mapper = {
  source: 'hyperliquid',
  *map(payload, ctx) {
    if (!isObject(payload) || typeof payload.channel !== 'string') {
      yield* mapBare(payload, ctx);
      return;
    }
    const { channel, data } = payload;
    switch (channel) {
      case 'trades': {
        const fills = array(data, 'data');
        for (let i = 0; i < fills.length; i++) yield mapTrade(fills[i], i, ctx);
        return;
      }
      case 'l2Book':
        if (!isObject(data)) throw fieldError(data, 'data', 'a WsBook object');
        yield mapBook(data, ctx);
        return;
      case 'bbo':
        if (!isObject(data)) throw fieldError(data, 'data', 'a WsBbo object');
        yield mapBbo(data, ctx);
        return;
      default:
        if (!NOT_MARKET_DATA.has(channel)) throw unsupported(`channel "${channel.slice(0, 40)}"`);
    }
  },
};
