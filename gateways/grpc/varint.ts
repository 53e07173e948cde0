/**
 * Protobuf varints as the gRPC edge writes them (feed-protobuf.ts, batch-frames.ts): a length's
 * byte count, and a non-negative safe integer written 7 bits a byte.
 */

/** Bytes of the varint of a length (below 2^35). */
export const varintLength = (n: number): number =>
  n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;

/** A varint of a non-negative safe integer (low and high 32 bits, 7 bits a byte); the end. */
export function writeVarint(b: Buffer, pos: number, v: number): number {
  let lo = v >>> 0;
  let hi = (v - lo) / 4_294_967_296;
  while (hi !== 0) {
    b[pos++] = (lo & 127) | 128;
    lo = ((lo >>> 7) | (hi << 25)) >>> 0;
    hi >>>= 7;
  }
  while (lo > 127) {
    b[pos++] = (lo & 127) | 128;
    lo >>>= 7;
  }
  b[pos++] = lo;
  return pos;
}
