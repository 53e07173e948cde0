/**
 * The disk-sync framing of the buffered sink's string queue. The sink (gateways/core/buffered-sink.ts)
 * queues strings and joins them once per flush; the WebSocket wire needs them apart again, to put
 * consecutive events in one data frame and each control message in a frame of its own. So every
 * frame is a kind (`E` an event's bytes, `C` a control message's JSON, `T` the terminal error)
 * and the body's length in 4 chars, then the body: JSON text for `E`/`C`/`T` (json encoding), or
 * one char per byte (latin1) for an `E` of the msgpack encoding.
 */
import type { ErrorCode } from '../../contracts/errors.ts';

export type FrameKind = 'E' | 'C' | 'T';

const lengthChars = (n: number): string =>
  String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);

export const frame = (kind: FrameKind, body: string): string => `${kind}${lengthChars(body.length)}${body}`;

/** The frame that ends a connection with a catalogue row's close code. */
export const terminalFrame = (code: ErrorCode, message?: string): string =>
  frame('T', JSON.stringify({ code, message }));

/** Calls `visit` with each frame of a flushed chunk, in order. */
export function eachFrame(chunk: string, visit: (kind: FrameKind, body: string) => void): void {
  let at = 0;
  while (at + 5 <= chunk.length) {
    const len =
      ((chunk.charCodeAt(at + 1) << 24) >>> 0) +
      (chunk.charCodeAt(at + 2) << 16) +
      (chunk.charCodeAt(at + 3) << 8) +
      chunk.charCodeAt(at + 4);
    visit(chunk[at] as FrameKind, chunk.slice(at + 5, at + 5 + len));
    at += 5 + len;
  }
}
