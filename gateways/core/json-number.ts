/**
 * A JSON number token read in place from UTF-8 bytes, for the scanners that turn stored event JSON
 * straight into a wire format without `JSON.parse` (gateways/grpc/feed-protobuf.ts, gateways/
 * disksync/json-msgpack.ts; contracts/event-wire.ts `jsonUtf8` gives them the bytes). The value
 * is `JSON.parse`'s: the digits are summed as they are read and scaled by one power of ten where
 * that is exact (Clinger's fast path: digits that sum to less than 2^53 and a power up to 1e22,
 * each exact in a double, so one IEEE multiply or divide rounds correctly); anything else is
 * `Number` of the token, which rounds as `JSON.parse` does. JSON's grammar is checked here
 * (`Number` alone also takes `+1`, `.5`, `01`, `0x1`).
 */

import type { RawBuffer } from '../../contracts/raw-buffer.ts';

/** The value of the number read last: a second return value, without an object per call. */
export const scanned = { value: 0 };

/** 2^53: every integer below it is a double, and reached without rounding. */
const MAX_EXACT = 2 ** 53;

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
