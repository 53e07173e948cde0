/**
 * Builders of canonical events shared by every mapper: derived fields are computed here and only
 * here (notional, best bid/ask, mid, spread), and book sides are put in canonical order.
 */
import type { BookEvent, BookLevel, Side, Source, TradeEvent } from '../../contracts/events.ts';
import { NormalizeError } from './errors.ts';
import { fieldError, isPositive, toNumber } from './fields.ts';

/**
 * A venue trade; `venueId` is the venue's trade id (or Databento's `sequence`), already checked for
 * the trade_id character set: `trade_id` is `trd_<venueId>` and `venue_trade_id` is `venueId`.
 */
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
    venue_trade_id: venueId,
  };
}

const byPriceDesc = (a: BookLevel, b: BookLevel): number => b.price - a.price;
const byPriceAsc = (a: BookLevel, b: BookLevel): number => a.price - b.price;

/** Sorts in place, best first (bids descending, asks ascending), only when not already in order. */
function sortBestFirst(levels: BookLevel[], descending: boolean): void {
  for (let i = 1; i < levels.length; i++) {
    const prev = (levels[i - 1] as BookLevel).price;
    const cur = (levels[i] as BookLevel).price;
    if (descending ? cur > prev : cur < prev) {
      levels.sort(descending ? byPriceDesc : byPriceAsc);
      return;
    }
  }
}

/** `x` rounded to 10 decimal places (the fixtures' convention for spread_bps; |x| < 2e4 so exact). */
export const round10 = (x: number): number => Math.round(x * 1e10) / 1e10;

/**
 * A book. Sides are sorted best first when the venue did not.
 *
 * - Snapshot (`isSnapshot` true, or undefined = the canonical event as the simulator sends it,
 *   without the `is_snapshot` field): levels are expected to have size > 0. `best_bid`/`best_ask`
 *   are the first levels' prices, `null` for an empty side; `mid_price` and `spread_bps` are null
 *   unless both sides are present. A crossed book (ask < bid) is rejected with `crossed_book`,
 *   because the contract needs `spread_bps >= 0`; a locked book (ask = bid) is kept (spread 0).
 * - Diff (`isSnapshot` false): levels as given (size 0 deletes a level), every best field null.
 */
export function book(
  source: Source,
  symbol: string,
  timestampMs: number,
  captureMs: number,
  bids: BookLevel[],
  asks: BookLevel[],
  isSnapshot: boolean | undefined,
): BookEvent {
  sortBestFirst(bids, true);
  sortBestFirst(asks, false);
  let bestBid: number | null = null;
  let bestAsk: number | null = null;
  let mid: number | null = null;
  let spread: number | null = null;
  if (isSnapshot !== false) {
    const bid = bids[0];
    const ask = asks[0];
    if (bid !== undefined) bestBid = bid.price;
    if (ask !== undefined) bestAsk = ask.price;
    if (bid !== undefined && ask !== undefined) {
      if (ask.price < bid.price)
        throw new NormalizeError(
          'crossed_book',
          `crossed book: best ask ${ask.price} < best bid ${bid.price}`,
        );
      mid = (bid.price + ask.price) / 2;
      spread = round10(((ask.price - bid.price) / mid) * 10_000);
    }
  }
  // Built with `is_snapshot` in the literal (last, as before): adding it afterwards cost a hidden-class
  // transition on every venue book.
  if (isSnapshot === undefined)
    return {
      event_type: 'book',
      source,
      symbol,
      timestamp_ms: timestampMs,
      capture_time_ms: captureMs,
      bids,
      asks,
      best_bid: bestBid,
      best_ask: bestAsk,
      mid_price: mid,
      spread_bps: spread,
    };
  return {
    event_type: 'book',
    source,
    symbol,
    timestamp_ms: timestampMs,
    capture_time_ms: captureMs,
    bids,
    asks,
    best_bid: bestBid,
    best_ask: bestAsk,
    mid_price: mid,
    spread_bps: spread,
    is_snapshot: isSnapshot,
  };
}

/**
 * Levels from `[[price, size], …]` (Binance, SGX): decimal strings or numbers. Zero-size levels are
 * kept in a diff (`keepZero`: size 0 deletes the level) and dropped from a snapshot (a snapshot
 * lists no empty level).
 */
export function tupleLevels(raw: unknown, field: string, keepZero: boolean): BookLevel[] {
  if (!Array.isArray(raw)) throw fieldError(raw, field, 'an array of [price, size]');
  // Sized once (a growing array reallocates as it fills); trimmed if zero sizes were left out.
  const out: BookLevel[] = new Array(raw.length);
  let k = 0;
  for (let i = 0; i < raw.length; i++) {
    const level = raw[i];
    if (!Array.isArray(level)) throw fieldError(level, `${field}[${i}]`, 'a [price, size] pair');
    // Inline checks: field names are only built for an error.
    const price = toNumber(level[0]);
    if (!isPositive(price)) throw fieldError(level[0], `${field}[${i}][0]`, 'a positive number');
    const size = toNumber(level[1]);
    if (size > 0 && size < Number.POSITIVE_INFINITY) out[k++] = { price, size };
    else if (size !== 0) throw fieldError(level[1], `${field}[${i}][1]`, 'a number >= 0');
    else if (keepZero) out[k++] = { price, size: 0 };
  }
  if (k < out.length) out.length = k;
  return out;
}
