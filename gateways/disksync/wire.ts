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
import { closeCodeOf, closeReason, DISKSYNC_CLOSES, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import { type ApiError, ERROR_CATALOGUE, type ErrorCode, publicMessage } from '../../contracts/errors.ts';
import { DrainGate } from '../core/drain-gate.ts';
import type { Wire } from '../core/sink-parts.ts';
import type { FramerState } from './framer.ts';
import { eachFrame } from './frames.ts';

/**
 * Chars of event bodies per data frame: msgpack bodies are one char per byte; JSON text is counted
 * in UTF-16 units, up to 3 UTF-8 bytes each. Room is kept for the brackets or the array header.
 */
const FRAME_CHARS = { msgpack: MAX_FRAME_BYTES - 16, json: Math.floor(MAX_FRAME_BYTES / 3) - 16 };

function msgpackArrayHeader(n: number): string {
  if (n < 16) return String.fromCharCode(0x90 | n);
  if (n < 65_536) return String.fromCharCode(0xdc, n >>> 8, n & 255);
  return String.fromCharCode(0xdd, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255);
}

export class WsWire implements Wire {
  private sending = 0;
  /** Unsent: what the socket holds, while a send is not yet called back. */
  private readonly drain = new DrainGate(() => (this.sending === 0 ? 0 : this.ws.bufferedAmount));
  private batch: string[] = [];
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
    const bodies = this.batch;
    this.batch = [];
    this.batchBytes = 0;
    if (this.state.encoding === 'msgpack')
      this.send(Buffer.from(msgpackArrayHeader(n) + bodies.join(''), 'latin1'));
    else this.send(`[${bodies.join(',')}]`);
  }

  private send(data: string | Buffer): void {
    if (this.ended || this.ws.readyState !== this.ws.OPEN) return;
    this.sending++;
    this.ws.send(data, this.sent);
  }

  private readonly sent = (): void => {
    --this.sending;
    this.drain.written();
  };
}
