/**
 * The buffered sink's Wire over a grpc-js server stream (server-streaming or bidirectional).
 * A flushed chunk of message frames is already gRPC's wire bytes (frames.ts), so it goes onto the
 * call's HTTP/2 stream in one write (raw-stream.ts) instead of one grpc-js write per message;
 * where grpc-js does not expose that stream, each message is a `call.write` as before. The mode
 * is chosen at the first write and kept, so the two paths never reorder messages. The bytes count
 * as buffered until the write is called back (HTTP/2 flow control holds it while the client does
 * not read), which is the backpressure the sink's slow-client policy runs on; `onceDrain` calls
 * back once it is down to the sink's DRAIN_MARK (gateways/core/drain-gate.ts). The sink's terminal
 * value becomes the status (catalogue row → code, trailers `x-error-code`, `x-request-id`), sent
 * after every message written before it. A stream opened with `batch: true` has each flushed run of
 * messages folded into `FeedMessage.batch` messages (batch-frames.ts) on the way out.
 */
import type { ServerDuplexStream, ServerWritableStream } from '@grpc/grpc-js';
import { ApiError, SERVER_RESET } from '../../contracts/errors.ts';
import { DrainGate } from '../core/drain-gate.ts';
import type { Chunk, Terminal, Wire } from '../core/sink-parts.ts';
import { batchSharedFrames } from './batch-frames.ts';
import { http2StreamOf } from './call-http2-stream.ts';
import { messagesOf } from './frames.ts';
import { sendHeaders } from './headers.ts';
import { type RawStream, rawStreamOf } from './raw-stream.ts';
import { toGrpcStatus } from './status.ts';

export type GrpcStream = ServerWritableStream<unknown, unknown> | ServerDuplexStream<unknown, unknown>;

/** The RST_STREAM code of a stream dropped by the server (why CANCEL: contracts/errors.ts). */
const RST_CANCEL = SERVER_RESET.http2Code;
/**
 * Most bytes per write on the HTTP/2 stream. Each write is called back once flow control has let
 * all of it out, so a long chunk written whole would count as buffered until its last byte went:
 * in pieces, what is buffered falls as the client reads, and `onceDrain` can call back at its mark.
 */
const PIECE_BYTES = 64 * 1024;

export class GrpcWire implements Wire {
  private pending = 0;
  private readonly drain = new DrainGate(() => this.pending);
  private ended = false;
  /** The HTTP/2 stream written directly, null: message by message; undefined: not chosen yet. */
  private raw: RawStream | null | undefined;

  constructor(
    private readonly call: GrpcStream,
    private readonly requestId: string,
    private readonly batch = false,
  ) {}

  open(headers: Record<string, string>): void {
    sendHeaders(this.call, this.requestId, headers);
  }

  /** Message frames (frames.ts) only: the sink's terminal status comes through `end`. */
  write(chunk: Chunk): void {
    this.sendBytes(chunk);
  }

  get bufferedBytes(): number {
    return this.pending;
  }

  onceDrain(cb: () => void): void {
    this.drain.onceDrain(cb);
  }

  end(last?: Chunk, terminal?: Terminal): void {
    if (this.ended) return;
    if (last !== undefined) this.sendBytes(last);
    this.ended = true;
    if (this.call.cancelled) return;
    if (terminal) {
      const err = new ApiError(terminal.code, terminal.message);
      if (terminal.retryAfterSeconds !== undefined) err.retryAfterSeconds = terminal.retryAfterSeconds;
      this.call.emit('error', toGrpcStatus(err, this.requestId));
    } else this.call.end();
  }

  destroy(): void {
    // A terminated client that does not read holds the status behind flow control: reset the
    // stream (RST_STREAM is not flow-controlled, so a paused grpc-js client sees CANCELLED at once).
    // Destroying the grpc-js call alone sends nothing: its status waits behind the unsent writes.
    http2StreamOf(this.call)?.close(RST_CANCEL);
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

  private sendBytes(chunk: Chunk): void {
    if (chunk.length === 0 || this.ended || this.call.cancelled) return;
    // Frames are bytes (framer.ts); a string here could only be an empty frame, skipped above.
    const bytes = chunk as Buffer;
    // Folded once per chunk, so a chunk a flush shares between streams is folded once for all.
    const wireBytes = this.batch ? batchSharedFrames(bytes) : bytes;
    if (this.raw === undefined) this.raw = rawStreamOf(this.call);
    const raw = this.raw;
    if (raw) {
      if (raw.destroyed || raw.closed) return;
      for (let at = 0; at < wireBytes.length; at += PIECE_BYTES) {
        const piece = wireBytes.subarray(at, at + PIECE_BYTES);
        this.track(piece.length, (done) => raw.write(piece, done));
      }
      return;
    }
    for (const m of messagesOf(wireBytes)) this.track(m.length, (done) => this.call.write(m, done));
  }

  /** Counts `len` bytes as buffered until `write` calls back. */
  private track(len: number, write: (done: () => void) => void): void {
    this.pending += len;
    write(() => {
      this.pending -= len;
      this.drain.written();
    });
  }
}
