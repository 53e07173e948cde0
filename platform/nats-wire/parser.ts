/**
 * The server → client half of the NATS client protocol (https://docs.nats.io/reference/reference-
 * protocols/nats-protocol), for the history connection (history-connection.ts): `INFO`, `MSG`,
 * `HMSG`, `PING`, `PONG`, `+OK`, `-ERR`. Control lines are found with Buffer's native `indexOf`,
 * not byte by byte, and a payload is handed over as a view of the bytes read (never copied), the
 * reply subject as a range of them (a pull consumer reads sequences off it: no string per
 * message), a status header's code as a number. A message split across reads waits until its
 * last byte is in: the pieces are joined once, not at every read.
 */

import type { RawBuffer } from '../../contracts/raw-buffer.ts';

/**
 * A message's reply subject: `bytes[from, to)`, empty when it has none. One object, reused: valid
 * only during the `msg` call it is given to.
 */
export type ReplyView = { bytes: Buffer; from: number; to: number };

/** The reply subject as text (off the hot path: tests, logs). */
export const replyText = (r: ReplyView): string => r.bytes.toString('latin1', r.from, r.to);

/** A reply subject given as text, viewed as ReplyView (a message that did not come through the parser). */
export const replyViewOf = (reply: string): ReplyView => ({
  bytes: Buffer.from(reply, 'latin1'),
  from: 0,
  to: reply.length,
});

/** What the parser hands over. `status`: an HMSG's status code (`NATS/1.0 408 …`), else 0. */
export type WireHandlers = {
  msg(sid: number, subject: string, reply: ReplyView, status: number, payload: Buffer): void;
  info(json: string): void;
  ping(): void;
  pong(): void;
  err(message: string): void;
};

const CR = 0x0d;
const SPACE = 0x20;
/** A control line longer than this without its end is a protocol error (nats-server caps at 4 KiB). */
const MAX_CONTROL_LINE = 64 * 1024;
/** `NATS/1.0` and the space before a status code. */
const STATUS_AT = 9;

export class WireParser {
  /** Bytes read but not yet parsed, kept in pieces until `need` bytes are in. */
  private pieces: Buffer[] = [];
  private held = 0;
  /** Bytes the message at the start of `pieces` needs in all (0: unknown, join at the next read). */
  private need = 0;
  private readonly reply: ReplyView = { bytes: Buffer.alloc(0), from: 0, to: 0 };

  constructor(private readonly on: WireHandlers) {}

  /** Parses what can be parsed of `chunk` (after what is held); throws on a protocol error. */
  feed(chunk: Buffer): void {
    let data = chunk;
    if (this.held > 0) {
      this.pieces.push(chunk);
      this.held += chunk.length;
      if (this.held < this.need) return;
      data = Buffer.concat(this.pieces, this.held);
      this.pieces = [];
      this.held = 0;
    }
    const rest = this.parse(data);
    if (rest < data.length) {
      this.pieces.push(data.subarray(rest));
      this.held = data.length - rest;
    }
  }

  /** Parses whole operations from `data`; where the first incomplete one starts. */
  private parse(data: Buffer): number {
    let at = 0;
    while (at < data.length) {
      const lineEnd = data.indexOf(CR, at);
      if (lineEnd < 0 || lineEnd + 1 >= data.length) {
        if (data.length - at > MAX_CONTROL_LINE) throw new Error('nats protocol: control line too long');
        this.need = 0;
        return at;
      }
      const op = data[at];
      if (op === 0x4d || op === 0x48) {
        // MSG <subject> <sid> [reply] <#bytes> | HMSG <subject> <sid> [reply] <#header bytes> <#bytes>
        const end = this.message(data, at, lineEnd, op === 0x48);
        if (end < 0) return at;
        at = end;
        continue;
      }
      const line = data.toString('latin1', at, lineEnd);
      at = lineEnd + 2;
      if (line === 'PING') this.on.ping();
      else if (line === 'PONG') this.on.pong();
      else if (line.startsWith('INFO ')) this.on.info(line.slice(5));
      else if (line.startsWith('-ERR')) this.on.err(line.slice(4).trim().replace(/^'|'$/g, ''));
      else if (line !== '+OK') throw new Error(`nats protocol: unexpected ${line.slice(0, 40)}`);
    }
    this.need = 0;
    return at;
  }

  /** One MSG or HMSG at `at`: its end, or -1 (with `need` set) when its bytes are not all in yet. */
  private message(data: Buffer, at: number, lineEnd: number, headers: boolean): number {
    const subjectAt = at + (headers ? 5 : 4);
    const subjectEnd = data.indexOf(SPACE, subjectAt);
    const sidEnd = data.indexOf(SPACE, subjectEnd + 1);
    if (subjectEnd < 0 || sidEnd < 0 || sidEnd > lineEnd) throw new Error('nats protocol: bad MSG line');
    // The numbers are at the end of the line: one (#bytes) or two (#header bytes, #bytes).
    const sizeAt = data.lastIndexOf(SPACE, lineEnd - 1) + 1;
    const size = digits(data, sizeAt, lineEnd);
    let headerSize = 0;
    let argsEnd = sizeAt - 1;
    if (headers) {
      const headerAt = data.lastIndexOf(SPACE, argsEnd - 1) + 1;
      headerSize = digits(data, headerAt, argsEnd);
      argsEnd = headerAt - 1;
    }
    const sid = digits(data, subjectEnd + 1, sidEnd);
    if (sid < 0 || size < 0 || headerSize < 0 || headerSize > size || argsEnd < sidEnd)
      throw new Error('nats protocol: bad MSG line');
    const bodyAt = lineEnd + 2;
    const end = bodyAt + size + 2;
    if (end > data.length) {
      this.need = end - at;
      return -1;
    }
    const reply = this.reply;
    reply.bytes = data;
    reply.from = argsEnd > sidEnd ? sidEnd + 1 : 0;
    reply.to = argsEnd > sidEnd ? argsEnd : 0;
    const status = headers ? statusOf(data, bodyAt, bodyAt + headerSize) : 0;
    this.on.msg(
      sid,
      (data as RawBuffer).latin1Slice(subjectAt, subjectEnd),
      reply,
      status,
      data.subarray(bodyAt + headerSize, bodyAt + size),
    );
    return end;
  }
}

/**
 * The decimal number in `data[from, to)`; -1 if empty, not all digits, or past 15 digits (below
 * 2^53, so the sum is exact).
 */
export function digits(data: Buffer, from: number, to: number): number {
  if (to <= from || to - from > 15) return -1;
  let v = 0;
  for (let i = from; i < to; i++) {
    const d = (data[i] as number) - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** The status code of a header block (`NATS/1.0 503\r\n…`); 0 when it has none. */
function statusOf(data: Buffer, from: number, to: number): number {
  const at = from + STATUS_AT;
  if (to - from < STATUS_AT + 3 || data[at - 1] !== SPACE) return 0;
  const code = digits(data, at, at + 3);
  return code < 0 ? 0 : code;
}
