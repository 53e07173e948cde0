/**
 * The buffered sink's Wire over one `ws` WebSocket. A flushed chunk is already its WebSocket
 * messages as frames (the framer's `join`, messages.ts: events batched into data messages of at
 * most 4 MB, each control message on its own), written to the socket as they are in one call
 * (raw-socket.ts), or sent one by one through `ws.send` where `ws`'s internals are not as
 * pinned; the sink's terminal value becomes the `error` message and then the close with the
 * row's code.
 * Backpressure is the socket's own: `bufferedBytes` is `ws.bufferedAmount`, and `onceDrain` fires
 * once it is down to the sink's DRAIN_MARK (gateways/core/drain-gate.ts, as on the gRPC wire).
 */
import type { WebSocket } from 'ws';
import { closeCodeOf, closeReason, DISKSYNC_CLOSES } from '../../contracts/disksync.ts';
import { type ApiError, ERROR_CATALOGUE, type ErrorCode, publicMessage } from '../../contracts/errors.ts';
import { DrainGate } from '../core/drain-gate.ts';
import type { Chunk, Terminal, Wire } from '../core/sink-parts.ts';
import type { FramerState } from './framer.ts';
import { BINARY, eachMessage, type MessageKind } from './messages.ts';
import { rawSocketOf } from './raw-socket.ts';

export class WsWire implements Wire {
  private sending = 0;
  /** Unsent: what the socket holds, while a send is not yet called back. */
  private readonly drain = new DrainGate(() => (this.sending === 0 ? 0 : this.ws.bufferedAmount));
  private ended = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly state: FramerState & { shuttingDown: () => boolean },
    private readonly requestId: string,
  ) {}

  open(): void {}

  /** A flushed chunk: its messages (the framer's `join`). */
  write(chunk: Chunk): void {
    if (typeof chunk === 'string' || !this.writable()) return;
    const socket = rawSocketOf(this.ws);
    if (socket === null) eachMessage(chunk, this.sendMessage);
    else {
      this.sending++;
      socket.write(chunk, this.sent);
    }
  }

  private readonly sendMessage = (kind: MessageKind, payload: Buffer): void => {
    this.send(payload, kind === BINARY);
  };

  get bufferedBytes(): number {
    return this.ws.bufferedAmount;
  }

  onceDrain(cb: () => void): void {
    this.drain.onceDrain(cb);
  }

  end(last?: Chunk, terminal?: Terminal): void {
    if (last !== undefined) this.write(last);
    if (terminal) this.close(terminal);
    else if (!this.ended) this.closeWith(1000, 'done');
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
    this.send(
      JSON.stringify({ type: 'error', code, close_code: closeCode, message, request_id: this.requestId }),
    );
    this.closeWith(closeCode, message);
  }

  private closeWith(code: number, reason: string): void {
    this.ended = true;
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, closeReason(reason));
  }

  private writable(): boolean {
    return !this.ended && this.ws.readyState === this.ws.OPEN;
  }

  private send(data: string | Buffer, binary = false): void {
    if (!this.writable()) return;
    this.sending++;
    this.ws.send(data, { binary }, this.sent);
  }

  private readonly sent = (): void => {
    --this.sending;
    this.drain.written();
  };
}
