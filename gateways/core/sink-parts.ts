/**
 * The two parts a transport supplies to the buffered sink (buffered-sink.ts): how frames are
 * written (Framer) and where their bytes go (Wire). The queue, the coalesced flush, the bound
 * and the slow-client policy are the sink's, the same for every transport.
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import type { FeedEvent } from './feed-event.ts';

/**
 * One frame of a client's stream, typed: text (SSE messages, JSON control messages) or bytes
 * (a protobuf message, a MessagePack or stored-JSON event). An empty string is no frame.
 */
export type Frame = string | Buffer;

/**
 * What the first member of a live tail's group made of a run for the others (BufferedSink `run`):
 * its frame (null: the framer cannot encode one of its events), and whether it holds an event whose
 * frame is conflatable (a book), which a blocked client must keep apart to conflate.
 */
export type RunShare = { frame?: Frame | null; conflatable?: boolean };

/** What a flush hands the wire: its frames joined by the transport (`Framer.join`). */
export type Chunk = string | Buffer;

/** The end of a stream with a catalogue row, as a value: each wire says it its own way. */
export type Terminal = { code: ErrorCode; message?: string; retryAfterSeconds?: number };

/** Turns what the sink sends into frames, and a flush's frames into one chunk. */
export type Framer = {
  /** Sent once, right after the wire opens (SSE: `retry:`); may be empty. */
  preamble(): string;
  /** An event; memoise it in `ev.wire` so every client of the process shares one encoding. */
  event(ev: FeedEvent): Frame;
  /** True while this client's event frames are its own (an SSE id with an own position): never shared. */
  personal?(): boolean;
  /** A non-terminal notice (`position_not_retained`, `feed_recovered`, ...). */
  notice(n: Record<string, unknown>): Frame;
  /** A non-terminal error (`coin_not_found`, `feed_stale`, `upstream_lag`). */
  warning(code: ErrorCode, message: string | undefined, extra: Record<string, unknown>): Frame;
  /** A keep-alive frame, or null when the transport has its own (e.g. WebSocket pings). */
  heartbeat(): Frame | null;
  /** The last frame of a finite stream (cache replay). */
  end(data: Record<string, unknown>): Frame;
  /**
   * A flush's frames as the wire writes them, in order. `shared`: the chunk goes to every wire of
   * one selection in this flush (Flusher `shared`), so make it bytes once here, not once per socket.
   */
  join(frames: readonly Frame[], shared: boolean): Chunk;
  /**
   * True where `join` (not shared) is plain concatenation (SSE text, gRPC messages): a run of
   * events joined into one frame, joined later with other frames, gives the same bytes, so the
   * sink can take live runs (`BufferedSink.run`); absent: events one by one (disk-sync packs
   * frames into messages).
   */
  readonly concatenates?: boolean;
};

/** A byte stream to one client. */
export type Wire = {
  /** Starts the stream: status and headers where the transport has them, then `preamble`. */
  open(headers: Record<string, string>, preamble: string): void;
  write(chunk: Chunk): void;
  /** Bytes accepted by `write` that the socket has not sent yet. */
  readonly bufferedBytes: number;
  /** Calls `cb` once, when the buffered bytes are down to the sink's DRAIN_MARK (or all sent). */
  onceDrain(cb: () => void): void;
  /** Writes `last` (if given) and ends the stream: normally, or with `terminal`'s catalogue row. */
  end(last?: Chunk, terminal?: Terminal): void;
  /** Drops the connection at once (a terminated client that does not go away). */
  destroy(): void;
  /** Calls `cb` once when the connection closes, from either side. */
  onClose(cb: () => void): void;
};
