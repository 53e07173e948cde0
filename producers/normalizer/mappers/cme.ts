// https://databento.com/docs/schemas-and-data-formats (GLBX.MDP3: trades, tbbo, mbp-1, mbp-10, bbo-1s/1m)
/**
 * CME Globex as Databento JSON records (`dbn -J` or HTTP `encoding=json`): header nested as `hd` or
 * flat, prices as 1e-9 fixed-point integer strings or `pretty_px` decimals, times as ns integer
 * strings or `pretty_ts` ISO strings. `action: "T"` is a trade; `levels` give a book snapshot.
 */
import type { BookLevel, MarketEvent, Side } from '../../../contracts/events.ts';
import { book, trade } from '../canonical.ts';
import { NormalizeError } from '../errors.ts';
import {
  array,
  fieldError,
  integerId,
  isObject,
  type Json,
  nonNegative,
  nsToMs,
  object,
  positive,
  symbolOf,
  within,
} from '../fields.ts';
import type { MapContext, Mapper } from '../mapper.ts';

/** i64::MAX: Databento's "no price" (an empty book level). */
const UNDEF_PRICE = '9223372036854775807';
/** flags bit: ts_recv is unreliable (then capture time falls back to the event time). */
const BAD_TS_RECV = 8;

const RTYPE_TRADES = 0x00;
const RTYPE_MBO = 0xa0;
/** MBP-1 / TBBO, MBP-10, CMBP-1, CBBO-1s/1m, TCBBO, BBO-1s/1m: records with `levels`. */
const BOOK_RTYPES = new Set([0x01, 0x0a, 0xb1, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4]);
/** Valid records with no trade or book (OHLCV, status, definition, imbalance, error, symbol mapping, system, statistics). */
const NOT_MARKET_DATA = new Set([
  0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x20, 0x21, 0x22, 0x23, 0x24,
]);
/** BBO-1s/1m, CBBO, TCBBO records carry the last trade's price/side but are books, not trades. */
const BBO_RTYPES = new Set([0xc0, 0xc1, 0xc3, 0xc4]);

/** A price in quote units: fixed-point 1e-9 integer (string or number) or a pretty_px decimal; undefined = none. */
function price(value: unknown, field: string): number | undefined {
  let n: number;
  if (typeof value === 'string') {
    if (value === UNDEF_PRICE) return undefined;
    n = value.includes('.') ? Number(value) : Number(value) / 1e9;
  } else if (typeof value === 'number') {
    if (value >= 9.2e18) return undefined;
    n = Number.isInteger(value) ? value / 1e9 : value;
  } else if (value === null) {
    return undefined;
  } else {
    throw fieldError(value, field, 'a 1e-9 fixed-point integer or a decimal string');
  }
  if (!(n > 0) || n === Number.POSITIVE_INFINITY) throw fieldError(value, field, 'a positive price');
  return n;
}

/** Databento `side` on a trade is the aggressor's: A = ask (seller), B = bid (buyer), N = none. */
function aggressor(side: unknown): Side {
  if (side === 'A') return 'sell';
  if (side === 'B') return 'buy';
  if (side === 'N') return 'unknown';
  throw fieldError(side, 'side', '"A", "B" or "N"');
}

function levels(rec: Json): { bids: BookLevel[]; asks: BookLevel[] } {
  const list = array(rec.levels, 'levels');
  const bids: BookLevel[] = [];
  const asks: BookLevel[] = [];
  for (let i = 0; i < list.length; i++) {
    try {
      const level = object(list[i], 'level');
      const bidPx = price(level.bid_px, 'bid_px');
      const bidSz = nonNegative(level.bid_sz, 'bid_sz');
      if (bidPx !== undefined && bidSz > 0) bids.push({ price: bidPx, size: bidSz });
      const askPx = price(level.ask_px, 'ask_px');
      const askSz = nonNegative(level.ask_sz, 'ask_sz');
      if (askPx !== undefined && askSz > 0) asks.push({ price: askPx, size: askSz });
    } catch (error) {
      throw within(`levels[${i}]`, error);
    }
  }
  return { bids, asks };
}

/** Whether the best ask is below the best bid (`book` rejects such a book with crossed_book). */
function isCrossed(bids: BookLevel[], asks: BookLevel[]): boolean {
  if (bids.length === 0 || asks.length === 0) return false;
  let bestBid = 0;
  let bestAsk = Number.POSITIVE_INFINITY;
  for (const level of bids) bestBid = Math.max(bestBid, level.price);
  for (const level of asks) bestAsk = Math.min(bestAsk, level.price);
  return bestAsk < bestBid;
}

function unsupported(message: string): NormalizeError {
  return new NormalizeError('unsupported_payload', `cme: ${message}`);
}

export const cmeMapper: Mapper = {
  source: 'cme',
  map(payload: unknown, ctx: MapContext, out: MarketEvent[]): void {
    if (!isObject(payload)) throw fieldError(payload, 'payload', 'a Databento JSON record');
    const hd = isObject(payload.hd) ? payload.hd : payload;
    const rtype = hd.rtype;
    if (rtype === undefined && hd.ts_event === undefined) {
      if (payload.TransactTime !== undefined || payload.MDEntryPx !== undefined)
        throw unsupported('raw MDP 3.0 messages are not supported; send Databento JSON records');
      throw unsupported('not a Databento record (no hd.rtype / ts_event)');
    }
    if (typeof rtype === 'number') {
      if (NOT_MARKET_DATA.has(rtype)) return;
      if (rtype === RTYPE_MBO)
        throw new NormalizeError(
          'book_delta',
          'cme: an MBO record is one order change, not price-level sizes; send mbp-1/mbp-10/tbbo records',
        );
      if (rtype !== RTYPE_TRADES && !BOOK_RTYPES.has(rtype))
        throw unsupported(`rtype ${rtype} is not supported`);
    } else if (rtype !== undefined) {
      throw fieldError(rtype, 'hd.rtype', 'an integer');
    }
    const ts = nsToMs(hd.ts_event, payload.hd === hd ? 'hd.ts_event' : 'ts_event');
    const flags = typeof payload.flags === 'number' ? payload.flags : 0;
    const capture =
      payload.ts_recv === undefined || (flags & BAD_TS_RECV) !== 0 ? ts : nsToMs(payload.ts_recv, 'ts_recv');
    const symbol = symbolOf(ctx, payload.symbol, 'symbol');
    const isBbo = typeof rtype === 'number' && BBO_RTYPES.has(rtype);
    const isTrade = payload.action === 'T' && !isBbo;
    if (rtype === RTYPE_TRADES && !isTrade)
      throw fieldError(payload.action, 'action', '"T" in a trades record');
    if (isTrade) {
      const px = price(payload.price, 'price');
      if (px === undefined) throw fieldError(null, 'price', 'a price');
      const size = positive(payload.size, 'size');
      // Databento has no trade id: the venue message sequence number stands in for it.
      const id = integerId(payload.sequence, 'sequence');
      out.push(trade('cme', symbol, ts, capture, aggressor(payload.side), px, size, id));
    }
    if (payload.levels === undefined) {
      if (!isTrade) throw fieldError(undefined, 'levels', 'book levels');
      return;
    }
    const { bids, asks } = levels(payload);
    if (isTrade && isCrossed(bids, asks)) return; // a tbbo's pre-trade BBO is optional: keep the trade
    out.push(book('cme', symbol, ts, capture, bids, asks, true));
  },
};
