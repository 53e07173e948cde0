/**
 * A flush's frames (framer.ts: an event's bytes as a Buffer, a control message's JSON as a string)
 * as the WebSocket messages they become, in one Buffer: consecutive events make one data message
 * (json: a text message holding `[` the stored JSON texts `,` … `]`, never parsed; msgpack: a binary
 * message holding a MessagePack array of the memoised encodings), cut so that none passes 4 MB;
 * each control message is a text message of its own. Every message is a kind byte and a 4-byte
 * length, then its payload as it goes on the socket, so a wire sends subarrays of the list (no
 * copy), and connections whose queues hold the same frames send one list (Framer `join`, Flusher
 * `shared`): the frames are cut and encoded once per flush for all of them, not once per socket.
 * The end of a connection is not a message here: the sink hands the wire its terminal as a value.
 */
import { type Encoding, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import type { Frame } from '../core/sink-parts.ts';
import { header } from './msgpack-formats.ts';

export const TEXT = 1;
export const BINARY = 2;
export type MessageKind = typeof TEXT | typeof BINARY;

/** Bytes of event bodies per data message, with room kept for the brackets or the array header. */
const MESSAGE_BYTES = MAX_FRAME_BYTES - 16;

/** Reused: the messages are written here, then copied out exact. */
let scratch = Buffer.allocUnsafe(64 * 1024) as RawBuffer;

/** The messages of a flush's frames, for a connection of `encoding`. */
export function wsMessages(frames: readonly Frame[], encoding: Encoding): Buffer {
  // Per frame: a message header (5), brackets or array header, comma (16 covers them); a control
  // message's text takes up to 3 UTF-8 bytes a UTF-16 unit.
  let bound = 16;
  for (const f of frames) bound += (typeof f === 'string' ? f.length * 3 : f.length) + 16;
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound) as RawBuffer;
  const b = scratch;
  const msgpack = encoding === 'msgpack';
  let at = 0;
  /** Where the open data message starts (its kind byte), or -1; its events and their bytes. */
  let open = -1;
  let count = 0;
  let bytes = 0;
  const close = (): void => {
    if (open < 0) return;
    // msgpack: the array header was given one byte; a longer one moves the bodies on.
    if (msgpack) at = header(b, open + 5, count, at, 0x90, 0xdc, 0xdd);
    else b[at++] = 0x5d; // ]
    b.writeUInt32BE(at - open - 5, open + 1);
    open = -1;
  };
  for (const f of frames) {
    if (f.length === 0) continue;
    if (typeof f !== 'string') {
      if (open >= 0 && bytes + f.length + 1 > MESSAGE_BYTES) close();
      if (open < 0) {
        open = at;
        b[at] = msgpack ? BINARY : TEXT;
        at += 6; // kind, length, then `[` or the array header's first byte
        if (!msgpack) b[at - 1] = 0x5b; // [
        count = 0;
        bytes = 0;
      } else if (!msgpack) b[at++] = 0x2c; // ,
      at += f.copy(b, at);
      count++;
      bytes += f.length + 1;
      continue;
    }
    close();
    b[at] = TEXT;
    const from = at + 5;
    at = from + b.utf8Write(f, from, b.length - from);
    b.writeUInt32BE(at - from, from - 4);
  }
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
