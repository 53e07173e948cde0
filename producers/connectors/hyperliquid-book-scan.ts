// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions (WsBook)
/**
 * A fast path for Hyperliquid `l2Book` pushes, most of the stream's bytes: the frame is read in
 * place, where JSON.parse would build some 40 level objects and 80 strings for the mapper to turn
 * into numbers and drop (the connector's largest cost after publishing, and much of its garbage).
 *
 * Why the event is the mapper's: only the exact compact layout the venue sends is accepted
 * (`{"channel":"l2Book","data":{"coin":…,"time":…,"levels":[[{"px":…,"sz":…,"n":…},…],[…]]}}`,
 * checked by one regular expression), with strings free of escapes, and values the mapper accepts
 * as they are; numbers are read as the mapper's `decimal` reads them (its exact sum, or `decimal`
 * itself), and the event is built by the same `book` and `symbolOf`. Anything else
 * (another key order, whitespace, an escape, a level the mapper would refuse) returns undefined
 * and the frame takes the general path (JSON.parse + the mapper), which names the faulty field.
 * test/unit/connector-hyperliquid-book-scan.test.ts checks both paths agree.
 */
import type { BookEvent, BookLevel } from '../../contracts/events.ts';
import { decimalIn } from '../../contracts/json-number.ts';
import { book } from '../normalizer/canonical.ts';
import { isPositive, symbolOf } from '../normalizer/fields.ts';

/** A JSON non-negative integer (no leading zero), as the venue writes `time` and `n`. */
const INT = '(?:0|[1-9][0-9]*)';
const LEVEL = `\\{"px":"[0-9.]+","sz":"[0-9.]+","n":${INT}\\}`;
const SIDE = `\\[(?:${LEVEL}(?:,${LEVEL})*)?\\]`;
/** The exact layout read here: checked natively in one pass, so the walk below needs no checks. */
const LAYOUT = new RegExp(
  `^\\{"channel":"l2Book","data":\\{"coin":"[A-Za-z0-9@/:+_-]+","time":${INT},"levels":\\[${SIDE},${SIDE}\\]\\}\\}$`,
);
const HEAD = '{"channel":"l2Book","data":{"coin":"'.length;
const CLOSE_BRACKET = 0x5d;
const NO_REQUEST_SYMBOL = { symbol: undefined, receivedAtMs: 0 };
/** Where the string read by the last `decimalAt` ended: its closing quote. */
let valueEnd = 0;

/** The number in the string from `i` (after its opening quote) to its closing quote, as `decimal` reads it. Sets `valueEnd`. */
function decimalAt(text: string, i: number): number {
  const j = text.indexOf('"', i);
  valueEnd = j < 0 ? text.length : j;
  return decimalIn(text, i, valueEnd);
}

/** The index after the integer at `i`. */
function skipInteger(text: string, i: number): number {
  let j = i;
  for (let c = text.charCodeAt(j); c >= 0x30 && c <= 0x39; c = text.charCodeAt(++j));
  return j;
}

/**
 * One side `[{"px":"…","sz":"…","n":N},…]` from `i` (layout already checked) into `out`, size 0
 * left out; the index after it, or -1 for a value the mapper refuses (the general path names it).
 */
function side(text: string, start: number, out: BookLevel[]): number {
  let i = start + 1; // [
  if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
  for (;;) {
    const price = decimalAt(text, i + 7); // {"px":"
    const size = decimalAt(text, valueEnd + 8); // ","sz":"
    if (!isPositive(price)) return -1;
    if (isPositive(size)) out.push({ price, size });
    else if (size !== 0) return -1;
    i = skipInteger(text, valueEnd + 6) + 1; // ","n":N}
    if (text.charCodeAt(i) === CLOSE_BRACKET) return i + 1;
    i++; // ,
  }
}

/** The book event of an `l2Book` frame in the venue's exact layout; undefined for any other frame. */
export function scanL2Book(text: string): BookEvent | undefined {
  if (!LAYOUT.test(text)) return undefined;
  const coinEnd = text.indexOf('"', HEAD);
  const timeStart = coinEnd + 9; // ","time":
  const timeEnd = skipInteger(text, timeStart);
  const time = Number(text.slice(timeStart, timeEnd));
  if (!Number.isSafeInteger(time)) return undefined;
  const bids: BookLevel[] = [];
  let i = side(text, timeEnd + 11, bids); // ,"levels":[
  if (i < 0) return undefined;
  const asks: BookLevel[] = [];
  i = side(text, i + 1, asks);
  if (i < 0) return undefined;
  const symbol = symbolOf(NO_REQUEST_SYMBOL, text.slice(HEAD, coinEnd), 'coin');
  return book('hyperliquid', symbol, time, time, bids, asks, true);
}
