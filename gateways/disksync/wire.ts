/**
 * The buffered sink's Wire over one `ws` WebSocket. A flushed chunk (frames.ts) becomes WebSocket
 * frames: consecutive events go out as one data frame (json: a text frame holding an array of the
 * stored JSON texts, joined, never parsed; msgpack: a binary frame holding a MessagePack array of
 * the memoised encodings), cut so that no frame passes 4 MB; each control message is a text frame.
 * A terminal frame becomes the `error` message and then the close with the row's code.
 * Backpressure is the socket's own: `bufferedBytes` is `ws.bufferedAmount`, and `onceDrain` fires
 * once it is down to the sink's DRAIN_MARK (gateways/core/drain-gate.ts, as on the gRPC wire).
 */
import type { WebSocket } from 'ws';
import {
  closeCodeOf,
  closeReason,
  DISKSYNC_CLOSES,
  type Encoding,
  MAX_FRAME_BYTES,
} from '../../contracts/disksync.ts';
import { type ApiError, ERROR_CATALOGUE, type ErrorCode, publicMessage } from '../../contracts/errors.ts';
import type { RawBuffer } from '../../contracts/raw-buffer.ts';
import { DrainGate } from '../core/drain-gate.ts';
import type { Wire } from '../core/sink-parts.ts';
import type { FramerState } from './framer.ts';
import { eachFrame } from './frames.ts';

/**
 * Chars of event bodies per data frame: msgpack bodies are one char per byte; JSON text is counted
 * in UTF-16 units, up to 3 UTF-8 bytes each. Room is kept for the brackets or the array header.
 */
const FRAME_CHARS = { msgpack: MAX_FRAME_BYTES - 16, json: Math.floor(MAX_FRAME_BYTES / 3) - 16 };

/** The MessagePack array header of `n` items written at `b[0]`; returns its length. */
function msgpackArrayHeader(b: Buffer, n: number): number {
  if (n < 16) {
    b[0] = 0x90 | n;
    return 1;
  }
  if (n < 65_536) {
    b[0] = 0xdc;
    b.writeUInt16BE(n, 1);
    return 3;
  }
  b[0] = 0xdd;
  b.writeUInt32BE(n, 1);
  return 5;
}

/**
 * A data frame's payload, written straight into one Buffer (no joined string for `ws` to encode
 * again): `[` body `,` … `]` in UTF-8 (json), or the array header and the bodies' bytes (msgpack,
 * one char per byte).
 */
let scratch = Buffer.allocUnsafe(64 * 1024) as RawBuffer;

function dataPayload(bodies: string[], chars: number, encoding: Encoding): Buffer {
  const n = bodies.length;
  if (encoding === 'msgpack') {
    const b = Buffer.allocUnsafe(5 + chars) as RawBuffer;
    let at = msgpackArrayHeader(b, n);
    for (let i = 0; i < n; i++) {
      const body = bodies[i] as string;
      at += b.latin1Write(body, at, body.length);
    }
    return b.subarray(0, at);
  }
  // UTF-8 takes up to 3 bytes per char: written into a scratch that room, then copied out exact,
  // so a queued frame never holds twice its size.
  if (scratch.length < chars * 3 + 2) scratch = Buffer.allocUnsafe(chars * 3 + 2) as RawBuffer;
  const b = scratch;
  b[0] = 0x5b; // [
  let at = 1;
  for (let i = 0; i < n; i++) {
    if (i > 0) b[at++] = 0x2c; // ,
    const body = bodies[i] as string;
    at += b.utf8Write(body, at, b.length - at);
  }
  b[at++] = 0x5d; // ]
  return Buffer.from(b.subarray(0, at));
}

export class WsWire implements Wire {
  private sending = 0;
  /** Unsent: what the socket holds, while a send is not yet called back. */
  private readonly drain = new DrainGate(() => (this.sending === 0 ? 0 : this.ws.bufferedAmount));
  private batch: string[] = [];
  /** Chars of the batch's bodies, and a comma each (FRAME_CHARS). */
  private batchBytes = 0;
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly state: FramerState & { shuttingDown: () => boolean },
    private readonly requestId: string,
  ) {}

  open(): void {}

  write(chunk: string | Buffer): void {
    const text = typeof chunk === 'string' ? chunk : chunk.toString();
    eachFrame(text, (kind, body) => {
      if (kind === 'E') this.addEvent(body);
      else if (kind === 'C') {
        this.sendBatch();
        this.send(body);
      } else this.close(JSON.parse(body));
    });
    this.sendBatch();
  }

  get bufferedBytes(): number {
    return this.ws.bufferedAmount;
  }

  onceDrain(cb: () => void): void {
    this.drain.onceDrain(cb);
  }

  end(last?: string): void {
    if (last) this.write(last);
    if (!this.ended) this.closeWith(1000, 'done');
  }

  destroy(): void {
    this.ws.terminate();
  }

  onClose(cb: () => void): void {
    this.ws.once('close', () => cb());
  }

  /** Sends the `error` message of a catalogue error, then closes with its code and reason. */
  fail(err: ApiError): void {
    this.close({ code: err.code, message: publicMessage(err) });
  }

  private close(t: { code: ErrorCode; message?: string }): void {
    // The sink ends a live consumer it cannot keep up with with `reconnect`; so does shutdown.
    if (t.code === 'reconnect') {
      const close =
        this.state.lagged && !this.state.shuttingDown() ? DISKSYNC_CLOSES.too_slow : DISKSYNC_CLOSES.shutdown;
      this.failRaw(
        this.state.lagged && !this.state.shuttingDown() ? 'too_slow' : 'reconnect',
        close.ws,
        close.reason,
      );
      return;
    }
    this.failRaw(t.code, closeCodeOf(t.code), t.message ?? ERROR_CATALOGUE[t.code].message);
  }

  /** Sends the `error` message (`code`: a catalogue code or a DISKSYNC_CLOSES name), then the close. */
  failRaw(code: string, closeCode: number, message: string): void {
    if (this.ended) return;
    this.sendBatch();
    this.send(
      JSON.stringify({ type: 'error', code, close_code: closeCode, message, request_id: this.requestId }),
    );
    this.closeWith(closeCode, message);
  }

  private closeWith(code: number, reason: string): void {
    this.ended = true;
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, closeReason(reason));
  }

  private addEvent(body: string): void {
    if (this.batchBytes + body.length + 1 > FRAME_CHARS[this.state.encoding]) this.sendBatch();
    this.batch.push(body);
    this.batchBytes += body.length + 1;
  }

  private sendBatch(): void {
    const n = this.batch.length;
    if (n === 0) return;
    const payload = dataPayload(this.batch, this.batchBytes, this.state.encoding);
    this.batch = [];
    this.batchBytes = 0;
    this.send(payload, this.state.encoding === 'msgpack');
  }

  private send(data: string | Buffer, binary = false): void {
    if (this.ended || this.ws.readyState !== this.ws.OPEN) return;
    this.sending++;
    this.ws.send(data, { binary }, this.sent);
  }

  private readonly sent = (): void => {
    --this.sending;
    this.drain.written();
  };
}
