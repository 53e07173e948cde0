/**
 * The gRPC framing of the buffered sink's string queue. The sink (gateways/core/buffered-sink.ts)
 * queues and conflates strings and counts their length as bytes, so a protobuf message travels as
 * a latin1 string (one char per byte) behind a 5-char header: a kind (`M` a message to write, `T`
 * the terminal status) and the payload length in 4 chars. A flushed chunk is split back into the
 * messages it holds (`splitFrames`), each written to the call as one gRPC message.
 */
import type { ErrorCode } from '../../contracts/errors.ts';

const lengthChars = (n: number): string =>
  String.fromCharCode((n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);

/** A message frame from protobuf bytes. */
export function messageFrame(bytes: Uint8Array): string {
  return `M${lengthChars(bytes.length)}${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')}`;
}

/** The frame that ends a stream with a catalogue row's status. */
export function terminalFrame(code: ErrorCode, message?: string): string {
  const body = JSON.stringify({ code, message });
  return `T${lengthChars(body.length)}${body}`;
}

export type Split = { messages: Buffer[]; terminal: { code: ErrorCode; message?: string } | null };

/** The messages (and the terminal status, if any) of a chunk of frames. */
export function splitFrames(chunk: string | Buffer): Split {
  const text = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
  const messages: Buffer[] = [];
  let terminal: Split['terminal'] = null;
  let at = 0;
  while (at + 5 <= text.length) {
    const kind = text[at];
    const len =
      ((text.charCodeAt(at + 1) << 24) >>> 0) +
      (text.charCodeAt(at + 2) << 16) +
      (text.charCodeAt(at + 3) << 8) +
      text.charCodeAt(at + 4);
    const body = text.slice(at + 5, at + 5 + len);
    at += 5 + len;
    if (kind === 'M') messages.push(Buffer.from(body, 'latin1'));
    else if (kind === 'T') terminal = JSON.parse(body);
  }
  return { messages, terminal };
}
