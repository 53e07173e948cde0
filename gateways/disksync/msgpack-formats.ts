/**
 * MessagePack formats as msgpackr 1.12 writes them with the disk-sync edge's options (no records,
 * no float32), written into a raw buffer at a position: the writers behind json-msgpack.ts's
 * scanner. Each returns the position after what it wrote (see json-msgpack.ts's file comment
 * for the format choices).
 */
import type { RawBuffer } from '../../contracts/raw-buffer.ts';

// float64 big-endian through a scratch double (Buffer's writeDoubleBE checks its arguments each call).
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);
const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Writes a container's header at `start`, moving its content when the header is longer than one byte. */
export function header(
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

/** Writes a str header of `hdr` bytes at p for `len` payload bytes already after it; the end. */
export function strHeader(o: RawBuffer, p: number, len: number, hdr: number): number {
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

/**
 * A string token with escapes or non-ASCII chars (`s[from, to)`, UTF-8, quotes included), decoded
 * as the event's JSON text was (`utf8Slice`: invalid UTF-8 becomes U+FFFD) and validated by
 * JSON.parse alone, and written at p as packr writes it: its own loop under 64 UTF-16 units, else
 * utf8Write. Byte count, or -1 for a token JSON.parse refuses.
 */
export function writeToken(s: RawBuffer, from: number, to: number, o: RawBuffer, p: number): number {
  let v: string;
  try {
    v = JSON.parse(s.utf8Slice(from, to)) as string;
  } catch {
    return -1;
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
export function writeNumber(o: RawBuffer, p: number, v: number): number {
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
