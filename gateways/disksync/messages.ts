/**
 * A flushed chunk (frames.ts) as the WebSocket messages it becomes, in one Buffer: consecutive
 * events make one data message (json: a text message holding `[` the stored JSON texts `,` … `]`,
 * never parsed; msgpack: a binary message holding a MessagePack array of the memoised encodings),
 * cut so that none passes 4 MB; each control message is a text message of its own; the terminal
 * frame is the end (the wire sends its `error` message and closes). Every message is a kind byte
 * and a 4-byte length, then its payload as it goes on the socket, so a wire sends subarrays of
 * the list (no copy), and connections whose queues hold the same frames send one list
 * (BufferedSink `chunkEncoding`, Flusher `shared`): the chunk is cut and encoded once per flush
 * for all of them, not once per socket.
 */
import { type Encoding, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { eachFrame } from './frames.ts';
import { header } from './msgpack-formats.ts';

export const TEXT = 1;
export const BINARY = 2;
export const END = 3;
export type MessageKind = typeof TEXT | typeof BINARY | typeof END;

/**
 * Chars of event bodies per data message: msgpack bodies are one char per byte; JSON text is
 * counted in UTF-16 units, up to 3 UTF-8 bytes each. Room is kept for the brackets or the array
 * header.
 */
const MESSAGE_CHARS = { msgpack: MAX_FRAME_BYTES - 16, json: Math.floor(MAX_FRAME_BYTES / 3) - 16 };

/** Reused: a chunk is written here (UTF-8 takes up to 3 bytes a char), then copied out exact. */
let scratch = Buffer.allocUnsafe(64 * 1024) as RawBuffer;

/** The messages of a flushed chunk, for a connection of `encoding`. */
export function wsMessages(chunk: string, encoding: Encoding): Buffer {
  // Each frame's 5-char header (×3) covers its message's header, brackets or array header, comma.
  const bound = chunk.length * 3 + 16;
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound) as RawBuffer;
  const b = scratch;
  const msgpack = encoding === 'msgpack';
  const cap = MESSAGE_CHARS[encoding];
  let at = 0;
  /** Where the open data message starts (its kind byte), or -1; its events and their chars. */
  let open = -1;
  let count = 0;
  let chars = 0;
  const close = (): void => {
    if (open < 0) return;
    // msgpack: the array header was given one byte; a longer one moves the bodies on.
    if (msgpack) at = header(b, open + 5, count, at, 0x90, 0xdc, 0xdd);
    else b[at++] = 0x5d; // ]
    b.writeUInt32BE(at - open - 5, open + 1);
    open = -1;
  };
  eachFrame(chunk, (kind, text) => {
    if (kind === 'E') {
      if (open >= 0 && chars + text.length + 1 > cap) close();
      if (open < 0) {
        open = at;
        b[at] = msgpack ? BINARY : TEXT;
        at += 6; // kind, length, then `[` or the array header's first byte
        if (!msgpack) b[at - 1] = 0x5b; // [
        count = 0;
        chars = 0;
      } else if (!msgpack) b[at++] = 0x2c; // ,
      at += msgpack ? b.latin1Write(text, at, text.length) : b.utf8Write(text, at, b.length - at);
      count++;
      chars += text.length + 1;
      return;
    }
    close();
    b[at] = kind === 'C' ? TEXT : END;
    const from = at + 5;
    at = from + b.utf8Write(text, from, b.length - from);
    b.writeUInt32BE(at - from, from - 4);
  });
  close();
  return Buffer.from(b.subarray(0, at));
}

/** Calls `visit` with each message of a list `wsMessages` made, in order. */
export function eachMessage(list: Buffer, visit: (kind: MessageKind, payload: Buffer) => void): void {
  let at = 0;
  while (at + 5 <= list.length) {
    const len = list.readUInt32BE(at + 1);
    visit(list[at] as MessageKind, list.subarray(at + 5, at + 5 + len));
    at += 5 + len;
  }
}
