/**
 * A flush's frames (framer.ts: an event's bytes as a Buffer, a control message's JSON as a string)
 * as the WebSocket messages they become, in one Buffer: consecutive events make one data message
 * (json: a text message holding `[` the stored JSON texts `,` … `]`, never parsed; msgpack: a binary
 * message holding a MessagePack array of the memoised encodings), cut so that none passes 4 MB;
 * each control message is a text message of its own. The list is the messages as WebSocket frames
 * (RFC 6455 §5.2, unmasked as a server's are), byte for byte what `ws` would put on the socket, so a
 * wire writes the whole list to its socket in one call (raw-socket.ts), and connections whose
 * queues hold the same frames send one list (Framer `join`, Flusher `shared`): the frames are cut
 * and encoded once per flush for all of them, not once per socket.
 * The end of a connection is not a message here: the sink hands the wire its terminal as a value.
 */
import { type Encoding, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import type { Frame } from '../core/sink-parts.ts';
import { header } from './msgpack-formats.ts';

/** The WebSocket opcodes (RFC 6455 §5.2). */
export const TEXT = 1;
export const BINARY = 2;
export type MessageKind = typeof TEXT | typeof BINARY;

/** Bytes of event bodies per data message, with room kept for the brackets or the array header. */
const MESSAGE_BYTES = MAX_FRAME_BYTES - 16;

/** Reused: the messages are written here, then copied out exact. */
let scratch = Buffer.allocUnsafe(64 * 1024) as RawBuffer;

/**
 * Ends the message whose 2-byte header was reserved at `start` and whose payload ends at `end`:
 * writes its RFC 6455 header (FIN, the opcode, the payload length in 7, 7+16 or 7+64 bits; a server
 * frame is never masked), moving the payload on when the length needs more than the 2 bytes.
 * Returns where the message now ends.
 */
function endMessage(b: RawBuffer, start: number, end: number, kind: MessageKind): number {
  const len = end - start - 2;
  const extra = len < 126 ? 0 : len < 0x10000 ? 2 : 8;
  if (extra > 0) b.copyWithin(start + 2 + extra, start + 2, end);
  b[start] = 0x80 | kind;
  if (extra === 0) b[start + 1] = len;
  else if (extra === 2) {
    b[start + 1] = 126;
    b.writeUInt16BE(len, start + 2);
  } else {
    b[start + 1] = 127;
    b.writeUInt32BE(0, start + 2);
    b.writeUInt32BE(len, start + 6);
  }
  return end + extra;
}

/** The messages of a flush's frames, for a connection of `encoding`. */
export function wsMessages(frames: readonly Frame[], encoding: Encoding): Buffer {
  // Per frame: a message header (10), brackets or array header, comma (16 covers them); a control
  // message's text takes up to 3 UTF-8 bytes a UTF-16 unit.
  let bound = 16;
  for (const f of frames) bound += (typeof f === 'string' ? f.length * 3 : f.length) + 16;
  if (scratch.length < bound) scratch = Buffer.allocUnsafe(bound) as RawBuffer;
  const b = scratch;
  const msgpack = encoding === 'msgpack';
  let at = 0;
  /** Where the open data message starts (its header), or -1; its events and their bytes. */
  let open = -1;
  let count = 0;
  let bytes = 0;
  const close = (): void => {
    if (open < 0) return;
    // msgpack: the array header was given one byte; a longer one moves the bodies on.
    if (msgpack) at = header(b, open + 2, count, at, 0x90, 0xdc, 0xdd);
    else b[at++] = 0x5d; // ]
    at = endMessage(b, open, at, msgpack ? BINARY : TEXT);
    open = -1;
  };
  for (const f of frames) {
    if (f.length === 0) continue;
    if (typeof f !== 'string') {
      if (open >= 0 && bytes + f.length + 1 > MESSAGE_BYTES) close();
      if (open < 0) {
        open = at;
        at += 3; // the header's 2 bytes, then `[` or the array header's first byte
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
    const from = at + 2;
    at = endMessage(b, at, from + b.utf8Write(f, from, b.length - from), TEXT);
  }
  close();
  return Buffer.from(b.subarray(0, at));
}

/** Calls `visit` with each message of a list `wsMessages` made, in order. */
export function eachMessage(list: Buffer, visit: (kind: MessageKind, payload: Buffer) => void): void {
  let at = 0;
  while (at + 2 <= list.length) {
    const kind = ((list[at] as number) & 0x0f) as MessageKind;
    const short = (list[at + 1] as number) & 0x7f;
    const head = short < 126 ? 2 : short === 126 ? 4 : 10;
    const len = short < 126 ? short : short === 126 ? list.readUInt16BE(at + 2) : list.readUInt32BE(at + 6);
    visit(kind, list.subarray(at + head, at + head + len));
    at += head + len;
  }
}
