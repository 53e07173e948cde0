/**
 * gRPC message frames: gRPC's length-prefixed message (flag 0, then the length, big-endian, then
 * the protobuf bytes), so a flushed run of frames, concatenated, is already what goes on the HTTP/2
 * stream and is written in one piece (wire.ts). The end of a stream is not a frame: the sink hands
 * the wire its terminal status as a value (gateways/core/sink-parts.ts `Terminal`).
 */

/** A message frame from protobuf bytes: the gRPC wire bytes of one message. */
export function messageFrame(bytes: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + bytes.length);
  out[0] = 0;
  out.writeUInt32BE(bytes.length, 1);
  out.set(bytes, 5);
  return out;
}

/** A flush's frames, concatenated. Every gRPC frame is bytes; an empty string is no frame. */
export function joinFrames(frames: readonly (string | Buffer)[]): Buffer {
  if (frames.length === 1 && typeof frames[0] !== 'string') return frames[0] as Buffer;
  const bufs: Buffer[] = [];
  for (const f of frames) {
    if (typeof f !== 'string') bufs.push(f);
    else if (f.length > 0) throw new Error('a gRPC frame must be bytes, not text');
  }
  return bufs.length === 1 ? (bufs[0] as Buffer) : Buffer.concat(bufs);
}

/** The protobuf bytes of each message in `wireBytes` (for a call written message by message). */
export function messagesOf(wireBytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 5 <= wireBytes.length; ) {
    const len = wireBytes.readUInt32BE(at + 1);
    out.push(wireBytes.subarray(at + 5, at + 5 + len));
    at += 5 + len;
  }
  return out;
}
