/**
 * Stored event JSON → MessagePack in one scan, for the disk-sync edge's msgpack encoding (the
 * catch-up hot path). The bytes are exactly what `JSON.parse` then msgpackr's
 * `Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true })` would give, so clients
 * see no difference; only the intermediate objects are gone (about 2.2 µs per event before).
 *
 * The format choices are msgpackr 1.12's (node_modules/msgpackr/pack.js):
 * - maps and arrays: fix (< 16), 16-bit (< 65536), else 32-bit header; the count is known only at
 *   the close, so one byte is reserved and the content moved when the header is longer;
 * - strings: fix/str8/str16/str32 by UTF-8 byte length; a string under 64 UTF-16 units is encoded
 *   by packr's own loop (a lone surrogate becomes its 3-byte WTF-8 form), a longer one by Buffer's
 *   utf8Write (a lone surrogate becomes U+FFFD); both are mirrored in `writeToken`;
 * - numbers: a uint32 as positive fixint (< 128, records off) / uint8 / uint16 / uint32, an int32
 *   as negative fixint / int8 / int16 / int32, anything else float64 (`useFloat32` is off, no int64);
 *   -0 passes `v >>> 0 === v`, so it is written as 0.
 *
 * Numbers equal `JSON.parse`'s: a digit loop only on the exact (Clinger) fast path, a mantissa of
 * at most 15 digits and a power of ten up to 1e22, each exact in a double so one IEEE multiply or
 * divide rounds correctly; otherwise `Number` of the token, which rounds as `JSON.parse` does.
 *
 * Where a JavaScript object does not keep the text's key order (an all-digit key, which may be an
 * array index and is listed first; a duplicate key, whose last value takes the first one's place),
 * where packr stops treating an object as plain (an own `constructor` key), or past a nesting
 * depth, the text is handed to `JSON.parse` + packr themselves (`DEFER`): those rules are theirs,
 * not restated here. Anything the scanner does not expect is invalid JSON: null, never bytes.
 *
 * Output goes to one module-level buffer (3 bytes per input char at most), reused; one grown past
 * 1 MiB for a big event is let go after it.
 */
import { Packr } from 'msgpackr';

type RawBuffer = Buffer & {
  latin1Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
};

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

/** `transcode`'s answers other than a byte count. */
const INVALID = -1; // the text is not JSON
const DEFER = -2; // JSON.parse + packr must decide (see the file comment)

const MAX_DEPTH = 500;
const SMALL_BYTES = 64 * 1024;
/** A buffer grown past this for one big event is dropped after it, not kept for every later one. */
const KEEP_BYTES = 1 << 20;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;

const alloc = (n: number): RawBuffer => Buffer.allocUnsafeSlow(n) as RawBuffer;
const small = alloc(SMALL_BYTES);
let out = small;

// The open containers, innermost last: its opening char, header byte, member count, first key.
const kinds = new Int32Array(MAX_DEPTH);
const starts = new Int32Array(MAX_DEPTH);
const counts = new Int32Array(MAX_DEPTH);
const keyBases = new Int32Array(MAX_DEPTH);
const keySets: (Set<string> | null)[] = [];
// Keys of the open objects (a stack): where each encoded key starts and ends in out, and its hash.
const keyStart: number[] = [];
const keyEnd: number[] = [];
const keyHash: number[] = [];

// float64 big-endian through a scratch double (Buffer's writeDoubleBE checks its arguments each call).
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * The MessagePack encoding of the JSON text as one char per byte (latin1), or null when the text
 * is not valid JSON (or packr itself would throw on it): then the caller skips the record.
 */
export function jsonToMsgpackLatin1(json: string): string | null {
  // Each input char yields at most 3 bytes (a 3-char float token yields 9; a char ≥ U+0800 yields 3).
  const need = json.length * 3 + 64;
  if (out.length < need) out = alloc(need);
  try {
    const n = transcode(json, out);
    if (n === INVALID) return null;
    if (n === DEFER) return viaPackr(json);
    return out.latin1Slice(0, n);
  } finally {
    if (out.length > KEEP_BYTES) out = small;
  }
}

function viaPackr(json: string): string | null {
  try {
    return Buffer.from(packr.pack(JSON.parse(json))).toString('latin1');
  } catch {
    return null;
  }
}

function skipWhitespace(s: string, i: number): number {
  let c = s.charCodeAt(i);
  if (c > 0x20) return i; // compact JSON: no call past this line
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = s.charCodeAt(++i);
  return i;
}

/**
 * One pass over `s`, writing into `o` (room for 3 bytes per char): the byte count, INVALID or
 * DEFER. A loop with an explicit stack of open containers; all state in locals (the hot path).
 */
function transcode(s: string, o: RawBuffer): number {
  let i = skipWhitespace(s, 0);
  let p = 0;
  let sp = 0; // open containers
  let keyTop = 0;
  let wantKey = false; // the next token is an object's key
  for (;;) {
    let c = s.charCodeAt(i);
    // A value, or an object's key when wantKey.
    if (c === 0x22) {
      const from = p;
      let payload = p + 1;
      let q = payload; // after a fixstr header; moved if longer
      let h = 0;
      let j = i + 1;
      for (;;) {
        const d = s.charCodeAt(j);
        if (d === 0x22) break;
        // Not printable ASCII (a control char, past the end: NaN), or a backslash.
        if (!(d >= 0x20 && d < 0x80) || d === 0x5c) {
          q = -1;
          break;
        }
        o[q++] = d;
        h = (Math.imul(h, 31) + d) | 0;
        j++;
      }
      if (q >= 0) {
        i = j + 1;
        const len = q - payload;
        if (len < 0x20) {
          o[p] = 0xa0 | len;
          p = q;
        } else {
          const hdr = len < 0x100 ? 2 : len < 0x10000 ? 3 : 5;
          o.copyWithin(p + hdr, p + 1, q);
          payload = p + hdr;
          p = strHeader(o, p, len, hdr);
        }
      } else {
        const end = stringEnd(s, i);
        if (end < 0) return INVALID;
        const len = writeToken(s, i, end, o, p + 5);
        if (len < 0) return INVALID;
        i = end;
        const hdr = len < 0x20 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : 5;
        o.copyWithin(p + hdr, p + 5, p + 5 + len);
        payload = p + hdr;
        p = strHeader(o, p, len, hdr);
        for (let k = payload; k < p; k++) h = (Math.imul(h, 31) + (o[k] as number)) | 0;
      }
      if (wantKey) {
        wantKey = false;
        if (keyDefers(o, payload, p)) return DEFER;
        const top = sp - 1;
        const base = keyBases[top] as number;
        if (keyTop - base < 16) {
          for (let k = base; k < keyTop; k++) {
            if (keyHash[k] === h && sameBytes(o, keyStart[k] as number, keyEnd[k] as number, from, p))
              return DEFER;
          }
          keyStart[keyTop] = from;
          keyEnd[keyTop] = p;
          keyHash[keyTop++] = h;
        } else {
          // Past 16 keys, duplicates are found by a set, not by a scan.
          let seen = keySets[top] ?? null;
          if (seen === null) {
            seen = new Set();
            for (let k = base; k < keyTop; k++)
              seen.add(o.latin1Slice(keyStart[k] as number, keyEnd[k] as number));
            keySets[top] = seen;
          }
          const key = o.latin1Slice(from, p);
          if (seen.has(key)) return DEFER;
          seen.add(key);
        }
        i = skipWhitespace(s, i);
        if (s.charCodeAt(i) !== 0x3a) return INVALID;
        i = skipWhitespace(s, i + 1);
        continue;
      }
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (sp === MAX_DEPTH) return DEFER;
      kinds[sp] = c;
      starts[sp] = p++;
      counts[sp] = 0;
      keyBases[sp] = keyTop;
      keySets[sp] = null;
      sp++;
      i = skipWhitespace(s, i + 1);
      if (s.charCodeAt(i) !== c + 2) {
        // '}' and ']' are their openers + 2
        if (c === OPEN_OBJECT) {
          if (s.charCodeAt(i) !== 0x22) return INVALID;
          wantKey = true;
        }
        continue;
      }
      i++;
      sp--;
      o[p - 1] = c === OPEN_OBJECT ? 0x80 : 0x90;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const from = i;
      const negative = c === 0x2d;
      if (negative) c = s.charCodeAt(++i);
      let m = 0; // the digits as an integer; exact while digits ≤ 15
      let digits = 0;
      let exp = 0; // power of ten to apply to m
      if (c === 0x30) {
        digits = 1;
        c = s.charCodeAt(++i);
      } else if (c >= 0x31 && c <= 0x39) {
        do {
          m = m * 10 + (c - 0x30);
          digits++;
          c = s.charCodeAt(++i);
        } while (c >= 0x30 && c <= 0x39);
      } else return INVALID;
      if (c === 0x2e) {
        c = s.charCodeAt(++i);
        if (!(c >= 0x30 && c <= 0x39)) return INVALID;
        do {
          m = m * 10 + (c - 0x30);
          digits++;
          exp--;
          c = s.charCodeAt(++i);
        } while (c >= 0x30 && c <= 0x39);
      }
      let expDigits = 0;
      if (c === 0x65 || c === 0x45) {
        c = s.charCodeAt(++i);
        const expNegative = c === 0x2d;
        if (expNegative || c === 0x2b) c = s.charCodeAt(++i);
        if (!(c >= 0x30 && c <= 0x39)) return INVALID;
        let e = 0;
        do {
          e = e * 10 + (c - 0x30);
          expDigits++;
          c = s.charCodeAt(++i);
        } while (c >= 0x30 && c <= 0x39);
        exp += expNegative ? -e : e;
      }
      let v: number;
      if (digits > 15 || expDigits > 4 || exp > 22 || exp < -22) v = Number(s.slice(from, i));
      else {
        v = exp === 0 ? m : exp > 0 ? m * (POW10[exp] as number) : m / (POW10[-exp] as number);
        if (negative) v = -v;
      }
      p = writeNumber(o, p, v);
    } else if (c === 0x74 && s.startsWith('true', i)) {
      o[p++] = 0xc3;
      i += 4;
    } else if (c === 0x66 && s.startsWith('false', i)) {
      o[p++] = 0xc2;
      i += 5;
    } else if (c === 0x6e && s.startsWith('null', i)) {
      o[p++] = 0xc0;
      i += 4;
    } else return INVALID;

    // A value has ended: close the containers it ends, or go on to the next member.
    for (;;) {
      if (sp === 0) return skipWhitespace(s, i) === s.length ? p : INVALID;
      const top = sp - 1;
      const n = (counts[top] as number) + 1;
      counts[top] = n;
      i = skipWhitespace(s, i);
      c = s.charCodeAt(i++);
      const kind = kinds[top] as number;
      if (c === 0x2c) {
        i = skipWhitespace(s, i);
        if (kind === OPEN_OBJECT) {
          if (s.charCodeAt(i) !== 0x22) return INVALID;
          wantKey = true;
        }
        break;
      }
      if (c !== kind + 2) return INVALID;
      sp = top;
      if (kind === OPEN_OBJECT) {
        keyTop = keyBases[top] as number;
        keySets[top] = null;
        p = header(o, starts[top] as number, n, p, 0x80, 0xde, 0xdf);
      } else p = header(o, starts[top] as number, n, p, 0x90, 0xdc, 0xdd);
    }
  }
}

/** Writes a container's header at `start`, moving its content when the header is longer than one byte. */
function header(
  o: RawBuffer,
  start: number,
  n: number,
  p: number,
  fix: number,
  x16: number,
  x32: number,
): number {
  if (n < 0x10) {
    o[start] = fix | n;
    return p;
  }
  const extra = n < 0x10000 ? 2 : 4;
  o.copyWithin(start + 1 + extra, start + 1, p);
  if (extra === 2) {
    o[start] = x16;
    o[start + 1] = n >> 8;
    o[start + 2] = n & 0xff;
  } else {
    o[start] = x32;
    o.writeUInt32BE(n, start + 1);
  }
  return p + extra;
}

/** A key packr would not see in the text's place: all digits (maybe an array index) or `constructor`. */
function keyDefers(o: RawBuffer, from: number, to: number): boolean {
  if (from === to) return false;
  const c = o[from] as number;
  if (c >= 0x30 && c <= 0x39) {
    for (let i = from + 1; i < to; i++) {
      const d = o[i] as number;
      if (d < 0x30 || d > 0x39) return false;
    }
    return true;
  }
  return c === 0x63 && to - from === 11 && o.latin1Slice(from, to) === 'constructor';
}

function sameBytes(o: RawBuffer, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (; a < aEnd; a++, b++) if (o[a] !== o[b]) return false;
  return true;
}

/** Writes a str header of `hdr` bytes at p for `len` payload bytes already after it; the end. */
function strHeader(o: RawBuffer, p: number, len: number, hdr: number): number {
  if (hdr === 1) o[p] = 0xa0 | len;
  else if (hdr === 2) {
    o[p] = 0xd9;
    o[p + 1] = len;
  } else if (hdr === 3) {
    o[p] = 0xda;
    o[p + 1] = len >> 8;
    o[p + 2] = len & 0xff;
  } else {
    o[p] = 0xdb;
    o.writeUInt32BE(len, p + 1);
  }
  return p + hdr + len;
}

/** The index after the closing quote of the string token at `i`, or INVALID. */
function stringEnd(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const c = s.charCodeAt(j);
    if (c === 0x22) return j + 1;
    if (!(c >= 0x20)) return INVALID; // a control char, or the text ends inside the string (NaN)
    j += c === 0x5c ? 2 : 1;
  }
}

/**
 * A string token with escapes or non-ASCII chars, decoded (and validated) by JSON.parse alone and
 * written at p as packr writes it: its own loop under 64 UTF-16 units, else utf8Write. Byte count or INVALID.
 */
function writeToken(s: string, from: number, to: number, o: RawBuffer, p: number): number {
  let v: string;
  try {
    v = JSON.parse(s.slice(from, to)) as string;
  } catch {
    return INVALID;
  }
  if (v.length >= 0x40) return o.utf8Write(v, p, o.length - p);
  const start = p;
  for (let i = 0; i < v.length; i++) {
    let c1 = v.charCodeAt(i);
    if (c1 < 0x80) o[p++] = c1;
    else if (c1 < 0x800) {
      o[p++] = (c1 >> 6) | 0xc0;
      o[p++] = (c1 & 0x3f) | 0x80;
    } else if ((c1 & 0xfc00) === 0xd800 && (v.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      c1 = 0x10000 + ((c1 & 0x03ff) << 10) + (v.charCodeAt(i + 1) & 0x03ff);
      i++;
      o[p++] = (c1 >> 18) | 0xf0;
      o[p++] = ((c1 >> 12) & 0x3f) | 0x80;
      o[p++] = ((c1 >> 6) & 0x3f) | 0x80;
      o[p++] = (c1 & 0x3f) | 0x80;
    } else {
      o[p++] = (c1 >> 12) | 0xe0;
      o[p++] = ((c1 >> 6) & 0x3f) | 0x80;
      o[p++] = (c1 & 0x3f) | 0x80;
    }
  }
  return p - start;
}

/** packr's number formats (useRecords false, no float32): see the file comment. The end. */
function writeNumber(o: RawBuffer, p: number, v: number): number {
  if (v >>> 0 === v) {
    if (v < 0x80) o[p++] = v;
    else if (v < 0x100) {
      o[p++] = 0xcc;
      o[p++] = v;
    } else if (v < 0x10000) {
      o[p++] = 0xcd;
      o[p++] = v >> 8;
      o[p++] = v & 0xff;
    } else {
      o[p++] = 0xce;
      o[p++] = v >>> 24;
      o[p++] = (v >> 16) & 0xff;
      o[p++] = (v >> 8) & 0xff;
      o[p++] = v & 0xff;
    }
  } else if (v >> 0 === v) {
    if (v >= -0x20) o[p++] = 0x100 + v;
    else if (v >= -0x80) {
      o[p++] = 0xd0;
      o[p++] = v + 0x100;
    } else if (v >= -0x8000) {
      o[p++] = 0xd1;
      o[p++] = (v >> 8) & 0xff;
      o[p++] = v & 0xff;
    } else {
      o[p++] = 0xd2;
      o[p++] = (v >> 24) & 0xff;
      o[p++] = (v >> 16) & 0xff;
      o[p++] = (v >> 8) & 0xff;
      o[p++] = v & 0xff;
    }
  } else if (littleEndian) {
    f64[0] = v;
    o[p] = 0xcb;
    o[p + 1] = f64Bytes[7] as number;
    o[p + 2] = f64Bytes[6] as number;
    o[p + 3] = f64Bytes[5] as number;
    o[p + 4] = f64Bytes[4] as number;
    o[p + 5] = f64Bytes[3] as number;
    o[p + 6] = f64Bytes[2] as number;
    o[p + 7] = f64Bytes[1] as number;
    o[p + 8] = f64Bytes[0] as number;
    p += 9;
  } else {
    o[p] = 0xcb;
    o.writeDoubleBE(v, p + 1);
    p += 9;
  }
  return p;
}
