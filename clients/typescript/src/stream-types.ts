/**
 * What the stream iterators yield (SSE `stream()`, gRPC `streamGrpc()`, disk-sync `streamDisk()`),
 * typed from the contracts: market events with their stream sequence, notices, non-terminal
 * warnings, and reconnection reports. `Position` is the one resume position of every transport:
 * the `MD` stream sequence (SSE `id:` / Last-Event-ID, gRPC `seq` / `after_seq`, disk-sync `seq` /
 * `from_seq`), so a position saved from one iterator resumes another.
 */
import type { SseCode } from '@mdp/contracts/errors';
import type { EventType, MarketEvent, Source } from '@mdp/contracts/events';
import type { MdpError } from './errors.ts';

/**
 * A stream sequence: resume after it to get the next event with no gap and no duplicate. The same
 * number on every transport and every gateway of a region (the `MD` stream's sequence).
 */
export type Position = number;

/** A canonical event as the stream serves it: `seq` first, the producer's stamps (Unix µs) last. */
export type StreamEvent = MarketEvent & { seq: Position; ingest_us?: number; publish_us?: number };

/** `event: notice` (never an error): the server moved the position, or a stale coin recovered. */
export type StreamNotice =
  | {
      code: 'position_not_retained' | 'position_beyond_end';
      message: string;
      requested_last_event_id: Position;
      /** Where the stream resumed: the iterator's position becomes this. */
      resumed_after: Position;
      first_seq: Position;
      last_seq: Position;
    }
  | { code: 'feed_recovered'; message: string; coin: string }
  /** A stored record that is not a valid event took this place (gRPC, disk-sync): the position moves past it. */
  | { code: 'record_skipped'; message: string; resumed_after: Position; coin: string }
  | { code: string; message: string; [field: string]: unknown };

/** A non-terminal `event: error` (`coin_not_found`, `feed_stale`, `upstream_lag`): the stream goes on. */
export type StreamWarning = {
  code: SseCode;
  message: string;
  request_id: string;
  terminal: false;
  coin?: string;
};

export type StreamItem =
  | { type: 'event'; seq: Position; event: StreamEvent }
  | { type: 'notice'; notice: StreamNotice }
  | { type: 'warning'; warning: StreamWarning }
  /** The connection ended; the iterator reconnects after `delayMs` (attempt n of consecutive failures). */
  | { type: 'reconnecting'; attempt: number; delayMs: number; error: MdpError };

/** What a stream delivers, on every transport: absent or empty lists mean "all". */
export type StreamFilters = {
  coins?: string[];
  eventTypes?: EventType[];
  sources?: Source[];
};

/** How every iterator resumes and reconnects, whatever its transport. */
export type ResumeOptions = {
  /** Resume after this position (the events that follow it, as Last-Event-ID does). */
  from?: Position;
  signal?: AbortSignal;
  /** No byte for this long (heartbeats come every 15 s) counts as a cut connection. Default 45 s. */
  idleTimeoutMs?: number;
  /** Longest wait between attempts. Default 30 s. */
  maxDelayMs?: number;
  /** Consecutive failed attempts before the iterator gives up with the last error. Default: never. */
  maxAttempts?: number;
  /** Source of jitter (tests). */
  random?: () => number;
};

export type StreamOptions = StreamFilters &
  ResumeOptions & {
    /** The unified edge, e.g. `https://us.example.com` (or the full `/api/v1/unified/stream` URL). */
    url: string;
    /** API key, sent as `x-api-key`. */
    key: string;
    /** A fetch implementation (default: the global one). */
    fetch?: typeof fetch;
  };
