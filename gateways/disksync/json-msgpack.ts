/**
 * Stored event JSON → MessagePack in one scan, for the disk-sync edge's msgpack encoding (the
 * catch-up hot path). The scan reads the JSON's UTF-8 bytes (contracts/event-wire.ts `jsonUtf8`:
 * at catch-up the stored bytes themselves), not its chars. The bytes are exactly what
 * `JSON.parse` then msgpackr's
 * `Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true })` would give, so clients
 * see no difference; only the intermediate objects (and their cost per event) are gone.
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
 * Numbers equal `JSON.parse`'s (read by contracts/json-number.ts, as the gRPC encoder reads them).
 *
 * Where a JavaScript object does not keep the text's key order (an all-digit key, which may be an
 * array index and is listed first; a duplicate key, whose last value takes the first one's place),
 * where packr stops treating an object as plain (an own `constructor` key), or past a nesting
 * depth, the text is handed to `JSON.parse` + packr themselves (`DEFER`): those rules are theirs,
 * not restated here. Anything the scanner does not expect is invalid JSON: null, never bytes.
 *
 * A JSON with no UTF-8 form (a raw lone surrogate, which no stream gives) is `DEFER`red whole.
 *
 * Output goes to one module-level buffer (3 bytes per input byte at most), reused; one grown past
 * 1 MiB for a big event is let go after it.
 */
import { Packr } from 'msgpackr';
import { jsonUtf8 } from '../../contracts/event-wire.ts';
import { readJsonNumber, scanned } from '../../contracts/json-number.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { isFalseAt, isNullAt, isTrueAt } from '../core/json-literals.ts';
import { header, strHeader, writeNumber, writeToken } from './msgpack-formats.ts';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

/** `transcode`'s answers other than a byte count. */
const INVALID = -1; // the text is not JSON
const DEFER = -2; // JSON.parse + packr must decide (see the file comment)

const MAX_DEPTH = 500;
const SMALL_BYTES = 64 * 1024;
/** A buffer grown past this for one big event is dropped after it, not kept for every later one. */
const KEEP_BYTES = 1 << 20;
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

/**
 * The MessagePack encoding of the JSON text (a Buffer of its own), or null when the text is not
 * valid JSON (or packr itself would throw on it): then the caller skips the record.
 */
export function jsonToMsgpack(json: string): Buffer | null {
  const text = jsonUtf8(json);
  if (text === null) return viaPackr(json);
  // Each input byte yields at most 3 (a 3-byte float token yields 9; an invalid UTF-8 byte, U+FFFD).
  const need = text.length * 3 + 64;
  if (out.length < need) out = alloc(need);
  try {
    const n = transcode(text.bytes, text.length, out);
    if (n === INVALID) return null;
    if (n === DEFER) return viaPackr(json);
    return Buffer.from(out.subarray(0, n));
  } finally {
    if (out.length > KEEP_BYTES) out = small;
  }
}

function viaPackr(json: string): Buffer | null {
  try {
    return Buffer.from(packr.pack(JSON.parse(json)));
  } catch {
    return null;
  }
}

function skipWhitespace(s: RawBuffer, i: number): number {
  let c = s[i] as number;
  if (c > 0x20) return i; // compact JSON: no call past this line
  while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = s[++i] as number;
  return i;
}

/**
 * One pass over `s[0, size)`, writing into `o` (room for 3 bytes per byte): the byte count,
 * INVALID or DEFER. A loop with an explicit stack of open containers; all state in locals (the hot path).
 */
function transcode(s: RawBuffer, size: number, o: RawBuffer): number {
  let i = skipWhitespace(s, 0);
  let p = 0;
  let sp = 0; // open containers
  let keyTop = 0;
  let wantKey = false; // the next token is an object's key
  for (;;) {
    let c = s[i] as number;
    // A value, or an object's key when wantKey.
    if (c === 0x22) {
      const from = p;
      let payload = p + 1;
      let q = payload; // after a fixstr header; moved if longer
      let h = 0;
      let j = i + 1;
      for (;;) {
        const d = s[j] as number;
        if (d === 0x22) break;
        // Not printable ASCII (a control char, the text's end: its 0), or a backslash.
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
        if (s[i] !== 0x3a) return INVALID;
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
      if (s[i] !== c + 2) {
        // '}' and ']' are their openers + 2
        if (c === OPEN_OBJECT) {
          if (s[i] !== 0x22) return INVALID;
          wantKey = true;
        }
        continue;
      }
      i++;
      sp--;
      o[p - 1] = c === OPEN_OBJECT ? 0x80 : 0x90;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = readJsonNumber(s, i);
      if (i < 0) return INVALID;
      p = writeNumber(o, p, scanned.value);
    } else if (c === 0x74 && isTrueAt(s, i)) {
      o[p++] = 0xc3;
      i += 4;
    } else if (c === 0x66 && isFalseAt(s, i)) {
      o[p++] = 0xc2;
      i += 5;
    } else if (c === 0x6e && isNullAt(s, i)) {
      o[p++] = 0xc0;
      i += 4;
    } else return INVALID;

    // A value has ended: close the containers it ends, or go on to the next member.
    for (;;) {
      if (sp === 0) return skipWhitespace(s, i) === size ? p : INVALID;
      const top = sp - 1;
      const n = (counts[top] as number) + 1;
      counts[top] = n;
      i = skipWhitespace(s, i);
      c = s[i++] as number;
      const kind = kinds[top] as number;
      if (c === 0x2c) {
        i = skipWhitespace(s, i);
        if (kind === OPEN_OBJECT) {
          if (s[i] !== 0x22) return INVALID;
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

/** The index after the closing quote of the string token at `i`, or INVALID. */
function stringEnd(s: RawBuffer, i: number): number {
  let j = i + 1;
  for (;;) {
    const c = s[j] as number;
    if (c === 0x22) return j + 1;
    if (!(c >= 0x20)) return INVALID; // a control char, or the text ends inside the string (its 0)
    if (c !== 0x5c) j++;
    else if ((s[j + 1] as number) >= 0x20) j += 2;
    else return INVALID; // never past the text's end
  }
}
