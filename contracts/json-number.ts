/**
 * The one fast reader of decimal number text, for the hot paths that turn it into doubles:
 * - `readJsonNumber` reads a JSON number token in place from UTF-8 bytes, for the gateway scanners
 *   that turn stored event JSON straight into a wire format without `JSON.parse` (gateways/grpc/
 *   feed-protobuf.ts, gateways/disksync/json-msgpack.ts; contracts/event-wire.ts `jsonUtf8` gives
 *   them the bytes); its value is `JSON.parse`'s;
 * - `decimal` reads a whole string as `Number()` does, for the venue mappers' prices and sizes
 *   ("33.82000000", producers/normalizer/fields.ts `toNumber`).
 *
 * Both read JSON's number grammar with the same steps and take the same value: the digits are
 * summed as they are read and scaled by one power of ten where that is exact (Clinger's fast path:
 * digits that sum to less than 2^53 and a power up to 1e22, each exact in a double, so one IEEE
 * multiply or divide rounds correctly); anything else is `Number` of the text, which rounds as
 * `JSON.parse` does. The grammar is checked here (`Number` alone also takes `+1`, `.5`, `01`,
 * `0x1`, ` 1 `): text outside it is `Number`'s (for `decimal`) or no number (for `readJsonNumber`).
 * The scan is written out once per source, bytes (`s[i]`) and string (`charCodeAt`), step for step
 * the same, the value step inline in each: a reader over either source would see both kinds at one
 * call site, and the value step as a shared function timed slower on the gateways' bytes.
 * test/unit/json-number.test.ts reads the same tokens both ways and keeps them equal.
 */

import type { RawBuffer } from './raw-buffer.ts';

/** The value of the number read last: a second return value, without an object per call. */
export const scanned = { value: 0 };

/** 2^53: every integer below it is a double, and reached without rounding. */
const MAX_EXACT = 2 ** 53;

/** 10^0 … 10^22, each exactly a double. */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

/**
 * Reads the number at `start` of `s` into `scanned.value`; its end, or -1 when it is not a JSON
 * number. The token must be followed by a byte that is not part of a number (`jsonUtf8` ends its
 * bytes with 0).
 */
export function readJsonNumber(s: RawBuffer, start: number): number {
  let i = start;
  let c = s[i] as number;
  const negative = c === 0x2d;
  if (negative) c = s[++i] as number;
  let m = 0; // the digits as an integer
  let exp = 0; // power of ten to apply to m
  if (c === 0x30) {
    c = s[++i] as number;
  } else if (c >= 0x31 && c <= 0x39) {
    do {
      m = m * 10 + (c - 0x30);
      c = s[++i] as number;
    } while (c >= 0x30 && c <= 0x39);
  } else return -1;
  if (c === 0x2e) {
    c = s[++i] as number;
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    do {
      m = m * 10 + (c - 0x30);
      exp--;
      c = s[++i] as number;
    } while (c >= 0x30 && c <= 0x39);
  }
  let expDigits = 0;
  if (c === 0x65 || c === 0x45) {
    c = s[++i] as number;
    const expNegative = c === 0x2d;
    if (expNegative || c === 0x2b) c = s[++i] as number;
    if (!(c >= 0x30 && c <= 0x39)) return -1;
    let e = 0;
    do {
      e = e * 10 + (c - 0x30);
      expDigits++;
      c = s[++i] as number;
    } while (c >= 0x30 && c <= 0x39);
    exp += expNegative ? -e : e;
  }
  // m is exact when it is below 2^53: it only grows, so no sum on the way was rounded (a sum that
  // was, 2^53 + 1, may round down to 2^53 itself).
  if (m >= MAX_EXACT || expDigits > 4 || exp > 22 || exp < -22)
    scanned.value = Number(s.latin1Slice(start, i));
  else {
    const v = exp === 0 ? m : exp > 0 ? m * (POW10[exp] as number) : m / (POW10[-exp] as number);
    scanned.value = negative ? -v : v;
  }
  return i;
}

/**
 * The number a whole string spells, as `Number(text)` gives it, except "" (NaN here, 0 there: an
 * empty field is no number). A JSON number (every venue's decimal strings) is read by the scan
 * above; anything else is `Number`'s.
 */
export function decimal(text: string): number {
  return decimalIn(text, 0, text.length);
}

/** `Number` of `text.slice(from, to)` (the whole text without a copy). */
function numberOf(text: string, from: number, to: number): number {
  return Number(from === 0 && to === text.length ? text : text.slice(from, to));
}

/**
 * `decimal` of `text.slice(from, to)`, read in place (a connector reads the numbers inside a
 * venue's message without cutting each one out).
 */
export function decimalIn(text: string, from: number, to: number): number {
  const n = to;
  // The common case first, a venue's plain decimal ("33.82000000") of at most 15 characters: its
  // digits form an exact integer and one division by an exact power of ten is correctly rounded,
  // as Number() rounds. (The general scan below costs about 5 % more per call on these.)
  if (to > from && to - from <= 15) {
    let m = 0;
    let dot = -1;
    let i = from;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x30 && c <= 0x39) m = m * 10 + (c - 0x30);
      else if (c === 0x2e && dot < 0) dot = i;
      else break;
    }
    if (i === n && dot !== from && dot !== n - 1) return dot < 0 ? m : m / (POW10[n - 1 - dot] as number);
  }
  let i = from;
  let c = n > from ? text.charCodeAt(from) : -1;
  const negative = c === 0x2d;
  if (negative) c = ++i < n ? text.charCodeAt(i) : -1;
  let m = 0;
  let exp = 0;
  if (c === 0x30) {
    c = ++i < n ? text.charCodeAt(i) : -1;
  } else if (c >= 0x31 && c <= 0x39) {
    do {
      m = m * 10 + (c - 0x30);
      c = ++i < n ? text.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
  } else return n === from ? Number.NaN : numberOf(text, from, to);
  if (c === 0x2e) {
    c = ++i < n ? text.charCodeAt(i) : -1;
    if (!(c >= 0x30 && c <= 0x39)) return numberOf(text, from, to);
    do {
      m = m * 10 + (c - 0x30);
      exp--;
      c = ++i < n ? text.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
  }
  let expDigits = 0;
  if (c === 0x65 || c === 0x45) {
    c = ++i < n ? text.charCodeAt(i) : -1;
    const expNegative = c === 0x2d;
    if (expNegative || c === 0x2b) c = ++i < n ? text.charCodeAt(i) : -1;
    if (!(c >= 0x30 && c <= 0x39)) return numberOf(text, from, to);
    let e = 0;
    do {
      e = e * 10 + (c - 0x30);
      expDigits++;
      c = ++i < n ? text.charCodeAt(i) : -1;
    } while (c >= 0x30 && c <= 0x39);
    exp += expNegative ? -e : e;
  }
  if (i !== n || m >= MAX_EXACT || expDigits > 4 || exp > 22 || exp < -22) return numberOf(text, from, to);
  const v = exp === 0 ? m : exp > 0 ? m * (POW10[exp] as number) : m / (POW10[-exp] as number);
  return negative ? -v : v;
}
