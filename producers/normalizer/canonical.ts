/**
 * Builders of canonical events shared by every mapper: derived fields are computed here and only
 * here (notional, best bid/ask, mid, spread), and book sides are put in canonical order.
 */
import type { BookEvent, BookLevel, Side, Source, TradeEvent } from '../../contracts/events.ts';
import { NormalizeError } from './errors.ts';
import { fieldError, isPositive, toNumber } from './fields.ts';

/** A trade; `venueId` is the venue's trade id, already checked for the trade_id character set. */
export function trade(
  source: Source,
  symbol: string,
  timestampMs: number,
  captureMs: number,
  side: Side,
  price: number,
  size: number,
  venueId: string,
): TradeEvent {
  return {
    event_type: 'trade',
    source,
    symbol,
    timestamp_ms: timestampMs,
    capture_time_ms: captureMs,
    side,
    price,
    size,
    trade_id: `trd_${venueId}`,
    notional_usd: price * size,
  };
}

const byPriceDesc = (a: BookLevel, b: BookLevel): number => b.price - a.price;
const byPriceAsc = (a: BookLevel, b: BookLevel): number => a.price - b.price;

function sorted(levels: BookLevel[], descending: boolean): BookLevel[] {
  for (let i = 1; i < levels.length; i++) {
    const prev = (levels[i - 1] as BookLevel).price;
    const cur = (levels[i] as BookLevel).price;
    if (descending ? cur > prev : cur < prev) return levels.sort(descending ? byPriceDesc : byPriceAsc);
  }
  return levels;
}

/**
 * A book snapshot. Sides are sorted best first when the venue did not; an empty side gives
 * `incomplete_book` and a crossed book (ask < bid) `crossed_book`, because the contract needs
 * positive best prices and a non-negative spread. A locked book (ask = bid) is kept (spread 0).
 */
export function book(
  source: Source,
  symbol: string,
  timestampMs: number,
  captureMs: number,
  bids: BookLevel[],
  asks: BookLevel[],
): BookEvent {
  sorted(bids, true);
  sorted(asks, false);
  const bid = bids[0];
  const ask = asks[0];
  if (bid === undefined || ask === undefined) {
    const side =
      bid === undefined ? (ask === undefined ? 'both sides are' : 'the bid side is') : 'the ask side is';
    throw new NormalizeError(
      'incomplete_book',
      `${side} empty: a canonical book needs a best bid and a best ask`,
    );
  }
  if (ask.price < bid.price)
    throw new NormalizeError('crossed_book', `crossed book: best ask ${ask.price} < best bid ${bid.price}`);
  const mid = (bid.price + ask.price) / 2;
  return {
    event_type: 'book',
    source,
    symbol,
    timestamp_ms: timestampMs,
    capture_time_ms: captureMs,
    bids,
    asks,
    best_bid: bid.price,
    best_ask: ask.price,
    mid_price: mid,
    spread_bps: ((ask.price - bid.price) / mid) * 10_000,
  };
}

/**
 * Levels from `[[price, size], …]` (Binance, SGX): decimal strings or numbers. Zero-size levels are
 * dropped (a snapshot lists no empty level; the contract's level size is positive).
 */
export function tupleLevels(raw: unknown, field: string): BookLevel[] {
  if (!Array.isArray(raw)) throw fieldError(raw, field, 'an array of [price, size]');
  const out: BookLevel[] = [];
  for (let i = 0; i < raw.length; i++) {
    const level = raw[i];
    if (!Array.isArray(level)) throw fieldError(level, `${field}[${i}]`, 'a [price, size] pair');
    // Inline checks: field names are only built for an error.
    const price = toNumber(level[0]);
    if (!isPositive(price)) throw fieldError(level[0], `${field}[${i}][0]`, 'a positive number');
    const size = toNumber(level[1]);
    if (size > 0 && size < Number.POSITIVE_INFINITY) out.push({ price, size });
    else if (size !== 0) throw fieldError(level[1], `${field}[${i}][1]`, 'a number >= 0');
  }
  return out;
}
