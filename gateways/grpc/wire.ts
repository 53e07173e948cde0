/**
 * The buffered sink's Wire over a grpc-js server stream (server-streaming or bidirectional).
 * Each flushed chunk is split into its messages (frames.ts), each one `stream.write`; the bytes
 * count as buffered until grpc-js calls the write back (HTTP/2 flow control holds it while the
 * client does not read), which is the backpressure the sink's slow-client policy runs on. A
 * terminal frame becomes the status (catalogue row → code, trailers `x-error-code`,
 * `x-request-id`), sent after every message written before it.
 */
import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import { ApiError } from '../../contracts/errors.ts';
import type { Wire } from '../core/sink-parts.ts';
import { splitFrames } from './frames.ts';
import { sendHeaders } from './headers.ts';
import { toGrpcStatus } from './status.ts';

export type GrpcStream = ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

/** NGHTTP2_CANCEL: the RST_STREAM code of a stream dropped by the server. */
const RST_CANCEL = 8;

export class GrpcWire implements Wire {
  private pending = 0;
  private drainWaiters: (() => void)[] = [];
  private ended = false;

  constructor(
    private readonly call: GrpcStream,
    private readonly requestId: string,
  ) {}

  open(headers: Record<string, string>): void {
    sendHeaders(this.call, this.requestId, headers);
  }

  write(chunk: string | Buffer): void {
    for (const m of splitFrames(chunk).messages) this.send(m);
  }

  get bufferedBytes(): number {
    return this.pending;
  }

  onceDrain(cb: () => void): void {
    if (this.pending === 0) queueMicrotask(cb);
    else this.drainWaiters.push(cb);
  }

  end(last?: string): void {
    if (this.ended) return;
    const { messages, terminal } = last ? splitFrames(last) : { messages: [], terminal: null };
    for (const m of messages) this.send(m);
    this.ended = true;
    if (this.call.cancelled) return;
    if (terminal)
      this.call.emit('error', toGrpcStatus(new ApiError(terminal.code, terminal.message), this.requestId));
    else this.call.end();
  }

  destroy(): void {
    // A terminated client that does not read holds the status behind flow control: drop the stream.
    const inner = (this.call as unknown as { call?: { stream?: { close?(code: number): void } } }).call;
    inner?.stream?.close?.(RST_CANCEL);
    this.call.destroy();
  }

  onClose(cb: () => void): void {
    let fired = false;
    const once = () => {
      if (fired) return;
      fired = true;
      cb();
    };
    this.call.once('cancelled', once);
    this.call.once('finish', once);
    this.call.once('close', once);
  }

  private send(m: Buffer): void {
    if (this.ended || this.call.cancelled) return;
    const len = m.length;
    this.pending += len;
    this.call.write(m, () => {
      this.pending -= len;
      if (this.pending === 0 && this.drainWaiters.length > 0) {
        const w = this.drainWaiters;
        this.drainWaiters = [];
        for (const cb of w) cb();
      }
    });
  }
}
