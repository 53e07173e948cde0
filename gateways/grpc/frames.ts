/**
 * The gRPC framing of the buffered sink's string queue. The sink (gateways/core/buffered-sink.ts)
 * queues and conflates strings and counts their length as bytes, so a protobuf message travels as
 * a latin1 string (one char per byte) behind a 5-char header. A message frame is exactly gRPC's
 * length-prefixed message (flag 0, then the length, big-endian), so a flushed run of messages is
 * already what goes on the HTTP/2 stream and is written in one piece (wire.ts). The terminal
 * status travels behind a `T` header, which no gRPC message starts with (its flag is 0 or 1).
 */
import type { ErrorCode } from '../../contracts/errors.ts';

const MESSAGE = '\0';
const TERMINAL = 'T';

const lengthChars = (n: number): string =>
  String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);

/** A message frame from protobuf bytes: the gRPC wire bytes of one message, as latin1. */
export function messageFrame(bytes: Uint8Array): string {
  return `${MESSAGE}${lengthChars(bytes.length)}${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')}`;
}

/** The frame that ends a stream with a catalogue row's status (and its `retry-after-ms`, if known). */
export function terminalFrame(code: ErrorCode, message?: string, retryAfterSeconds?: number): string {
  const body = JSON.stringify({ code, message, retry_after_s: retryAfterSeconds });
  return `${TERMINAL}${lengthChars(body.length)}${body}`;
}

export type Terminal = { code: ErrorCode; message?: string; retry_after_s?: number };

/** A chunk of frames as the wire writes it: its messages' gRPC bytes, and the terminal status if any. */
export type Split<T extends string | Buffer> = { wireBytes: T; terminal: Terminal | null };

const TERMINAL_BYTE = TERMINAL.charCodeAt(0);

const lengthAt = (text: string, at: number): number =>
  ((text.charCodeAt(at + 1) << 24) >>> 0) +
  (text.charCodeAt(at + 2) << 16) +
  (text.charCodeAt(at + 3) << 8) +
  text.charCodeAt(at + 4);

/**
 * Splits a chunk at its terminal frame (the sink writes it last): the messages before, the status.
 * A shared chunk arrives as the latin1 bytes of the same frames (buffered-sink.ts `chunkEncoding`).
 */
export function splitFrames<T extends string | Buffer>(chunk: T): Split<T> {
  const bytes = typeof chunk === 'string' ? null : (chunk as Buffer);
  const text = typeof chunk === 'string' ? chunk : null;
  const kindAt = (at: number) => (bytes ? (bytes[at] as number) : (text as string).charCodeAt(at));
  const lenAt = (at: number) => (bytes ? bytes.readUInt32BE(at + 1) : lengthAt(text as string, at));
  for (let at = 0; at + 5 <= chunk.length; at += 5 + lenAt(at)) {
    if (kindAt(at) !== TERMINAL_BYTE) continue;
    const body = chunk.slice(at + 5, at + 5 + lenAt(at));
    return {
      wireBytes: chunk.slice(0, at) as T,
      terminal: JSON.parse(typeof body === 'string' ? body : body.toString('latin1')),
    };
  }
  return { wireBytes: chunk, terminal: null };
}

/** The protobuf bytes of each message in `wireBytes` (for a call written message by message). */
export function messagesOf(wireBytes: string): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 5 <= wireBytes.length; ) {
    const len = lengthAt(wireBytes, at);
    out.push(Buffer.from(wireBytes.slice(at + 5, at + 5 + len), 'latin1'));
    at += 5 + len;
  }
  return out;
}
