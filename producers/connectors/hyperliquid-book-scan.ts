// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions (WsBook)
/**
 * A fast path for Hyperliquid `l2Book` pushes, most of the stream's bytes: the frame is read in
 * place, where JSON.parse would build some 40 level objects and 80 strings for the mapper to turn
 * into numbers and drop (the connector's largest cost after publishing, and much of its garbage).
 *
 * Why the event is the mapper's: only the exact compact layout the venue sends is accepted
 * (`{"channel":"l2Book","data":{"coin":…,"time":…,"levels":[[{"px":…,"sz":…,"n":…},…],[…]]}}`),
 * with strings free of escapes, and values the mapper accepts as they are; the numbers are read by
 * the mapper's own `decimal`, and the event built by the same `book` and `symbolOf`. Anything else
 * (another key order, whitespace, an escape, a level the mapper would refuse) returns undefined
 * and the frame takes the general path (JSON.parse + the mapper), which names the faulty field.
 * test/unit/connector-hyperliquid-book-scan.test.ts checks both paths agree.
 */
import type { BookEvent, BookLevel } from '../../contracts/events.ts';
import { book } from '../normalizer/canonical.ts';
import { decimal, isPositive, symbolOf } from '../normalizer/fields.ts';

/** Exact powers of ten, as `decimal` divides by. */
const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

const HEAD = '{"channel":"l2Book","data":{"coin":"';
const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const NO_REQUEST_SYMBOL = { symbol: undefined, receivedAtMs: 0 };

/** Letters, digits and `@ / : + _ -`: the canonical symbol's characters (no escapes possible). */
function isSymbolChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) || // a-z
    (c >= 0x41 && c <= 0x5a) || // A-Z
    (c >= 0x30 && c <= 0x3a) || // 0-9 and ':'
    c === 0x40 || // @
    c === 0x2f || // /
    c === 0x2b || // +
    c === 0x5f || // _
    c === 0x2d // -
  );
}

/** Whether `text` holds `literal` at `i` (compared by char code: no substring is built). */
function at(text: string, i: number, literal: string): boolean {
  for (let k = 0; k < literal.length; k++) if (text.charCodeAt(i + k) !== literal.charCodeAt(k)) return false;
  return true;
}

/** End of a JSON non-negative integer at `i` (`0` or no leading zero), or -1. */
function integerEnd(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === 0x30) return i + 1;
  if (!(first > 0x30 && first <= 0x39)) return -1;
  let j = i + 1;
  for (let c = text.charCodeAt(j); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++j));
  return j;
}

/** Where the decimal string read by `decimalAt` ended (its closing quote), or -1. */
let decimalEnd = -1;

/**
 * The value of `"<digits and dots>"` from `i` (after the opening quote), as `decimal` reads it:
 * up to 15 characters of digits with at most one dot are summed here, as `decimal` does; longer
 * or other text is handed to `decimal` itself. Sets `decimalEnd` (-1: not such a string).
 */
function decimalAt(text: string, i: number): number {
  let mantissa = 0;
  let decimals = -1;
  let j = i;
  for (; ; j++) {
    const c = text.charCodeAt(j);
    if (c >= 0x30 && c <= 0x39) {
      mantissa = mantissa * 10 + (c - 0x30);
      if (decimals >= 0) decimals++;
    } else if (c === 0x2e && decimals < 0) decimals = 0;
    else if (c === 0x2e || c !== QUOTE) {
      decimalEnd = -1;
      return Number.NaN;
    } else break;
  }
  decimalEnd = j;
  const n = j - i;
  if (n === 0) return Number.NaN;
  if (n > 15) return decimal(text.slice(i, j));
  if (decimals <= 0) return decimals === 0 && n === 1 ? Number.NaN : mantissa;
  return mantissa / (POW10[decimals] as number);
}

/** One side `[{"px":"…","sz":"…","n":N},…]` from `i` into `out` (size 0 left out); the index after it, or -1. */
function side(text: string, start: number, out: BookLevel[]): number {
  let i = start;
  if (text.charCodeAt(i) !== OPEN_BRACKET) return -1;
  i++;
  if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
  for (;;) {
    if (!at(text, i, '{"px":"')) return -1;
    const price = decimalAt(text, i + 7);
    if (decimalEnd < 0 || !isPositive(price) || !at(text, decimalEnd, '","sz":"')) return -1;
    const size = decimalAt(text, decimalEnd + 8);
    if (decimalEnd < 0 || !at(text, decimalEnd, '","n":')) return -1;
    i = integerEnd(text, decimalEnd + 6);
    if (i < 0 || text.charCodeAt(i) !== CLOSE_BRACE) return -1;
    if (isPositive(size)) out.push({ price, size });
    else if (size !== 0) return -1;
    const next = text.charCodeAt(++i);
    if (next === CLOSE_BRACKET) return i + 1;
    if (next !== COMMA) return -1;
    i++;
  }
}

/** The book event of an `l2Book` frame in the venue's exact layout; undefined for any other frame. */
export function scanL2Book(text: string): BookEvent | undefined {
  if (!at(text, 0, HEAD)) return undefined;
  const coinStart = HEAD.length;
  let i = coinStart;
  while (isSymbolChar(text.charCodeAt(i))) i++;
  if (i === coinStart || !at(text, i, '","time":')) return undefined;
  const coin = text.slice(coinStart, i);
  const timeStart = i + 9;
  i = integerEnd(text, timeStart);
  if (i < 0) return undefined;
  const time = Number(text.slice(timeStart, i));
  if (!Number.isSafeInteger(time) || !at(text, i, ',"levels":[')) return undefined;
  const bids: BookLevel[] = [];
  i = side(text, i + 11, bids);
  if (i < 0 || text.charCodeAt(i) !== COMMA) return undefined;
  const asks: BookLevel[] = [];
  i = side(text, i + 1, asks);
  if (i < 0 || i !== text.length - 3 || !at(text, i, ']}}')) return undefined;
  const symbol = symbolOf(NO_REQUEST_SYMBOL, coin, 'coin');
  return book('hyperliquid', symbol, time, time, bids, asks, true);
}
