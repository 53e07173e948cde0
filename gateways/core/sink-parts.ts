/**
 * The two parts a transport supplies to the buffered sink (buffered-sink.ts): how frames are
 * written (Framer) and where their bytes go (Wire). The queue, the coalesced flush, the bound
 * and the slow-client policy are the sink's, the same for every transport.
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import type { FeedEvent } from './feed-event.ts';

/** Turns what the sink sends into frames. Frames are concatenated into one chunk per flush. */
export type Framer = {
  /** Sent once, right after the wire opens (SSE: `retry:`); may be empty. */
  preamble(): string;
  /** An event; memoise it in `ev.wire` so every client of the process shares one encoding. */
  event(ev: FeedEvent): string;
  /** A non-terminal notice (`position_not_retained`, `feed_recovered`, ...). */
  notice(n: Record<string, unknown>): string;
  /** A non-terminal error (`coin_not_found`, `feed_stale`, `upstream_lag`). */
  warning(code: ErrorCode, message: string | undefined, extra: Record<string, unknown>): string;
  /** The terminal error that ends the stream (`reconnect`, `key_revoked`, ...). */
  terminal(code: ErrorCode, message?: string, retryAfterSeconds?: number): string;
  /** A keep-alive frame, or null when the transport has its own (e.g. WebSocket pings). */
  heartbeat(): string | null;
  /** The last frame of a finite stream (cache replay). */
  end(data: Record<string, unknown>): string;
};

/** A byte stream to one client. */
export type Wire = {
  /** Starts the stream: status and headers where the transport has them, then `preamble`. */
  open(headers: Record<string, string>, preamble: string): void;
  write(chunk: string | Buffer): void;
  /** Bytes accepted by `write` that the socket has not sent yet. */
  readonly bufferedBytes: number;
  /** Calls `cb` once, when the buffered bytes are down to the sink's DRAIN_MARK (or all sent). */
  onceDrain(cb: () => void): void;
  /** Writes `last` (if given) and ends the stream normally. */
  end(last?: string): void;
  /** Drops the connection at once (a terminated client that does not go away). */
  destroy(): void;
  /** Calls `cb` once when the connection closes, from either side. */
  onClose(cb: () => void): void;
};
