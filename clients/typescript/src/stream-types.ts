/**
 * What the stream iterators yield (SSE `stream()`, gRPC `streamGrpc()`, disk-sync `streamDisk()`),
 * typed from the contracts: market events with their stream sequence (or, when a stream selects
 * derived kinds, bars and book snapshots with their `DERIVED` sequence), notices, non-terminal
 * warnings, and reconnection reports. `Position` is the platform's resume position on every
 * transport: the `MD` stream sequence (SSE `id:` / Last-Event-ID, gRPC `seq` / `after_seq`,
 * disk-sync `seq` / `from_seq`). A stream that also carries the account's own events (`own: true`,
 * their `seq` the `OWN` sequence) has a second one: `ResumePosition` is the pair (SSE id `N:K`,
 * gRPC `after_seq` + `after_own_seq`, disk-sync `from_seq` + `from_own_seq`), so a position saved
 * from one iterator resumes another. A replay by time (`fromTime`, `toTime`, `speed`) is sent
 * with that position on every connection; the position wins.
 */
import type { BarEvent, BarKind, BookSnapshotEvent, DerivedKind } from '@mdp/contracts/derived';
import type { SseCode } from '@mdp/contracts/errors';
import type { EventType, MarketEvent, Source } from '@mdp/contracts/events';
import type { MdpError } from './errors.ts';

/**
 * A stream sequence: resume after it to get the next event with no gap and no duplicate. The same
 * number on every transport and every gateway of a region (the `MD` stream's sequence).
 */
export type Position = number;

/**
 * Where a stream resumes: `seq` the last platform (`MD`) sequence, `own_seq` the last own (`OWN`)
 * sequence once the stream has delivered one of the account's own events (absent before). Its text
 * form (`formatPosition`, `parsePosition`) is the SSE id: `N`, or `N:K`.
 */
export type ResumePosition = { seq: Position; own_seq?: Position };

/**
 * A canonical event as the stream serves it: `seq` first, the producer's stamps (Unix µs) last.
 * `own: true` marks one of the account's own events (published with `stream: true`): its `seq` is
 * its `OWN` sequence, a number space of its own (`isOwn`).
 */
export type MarketStreamEvent = MarketEvent & {
  seq: Position;
  own?: true;
  ingest_us?: number;
  publish_us?: number;
};

/** A trade bar (`bar_1s`, `bar_1m`, `bar_1h`) as streams and `md_ohlcv` serve it: its `DERIVED` sequence first. */
export type BarStreamEvent = BarEvent & { seq: Position };

/** A `book_snapshot_10_1s` as streams serve it: its `DERIVED` sequence first. */
export type BookSnapshotStreamEvent = BookSnapshotEvent & { seq: Position };

/** An event of the `DERIVED` stream (contracts/derived.ts). */
export type DerivedStreamEvent = BarStreamEvent | BookSnapshotStreamEvent;

/**
 * What a stream may select: the market events of `MD` (`trade`, `book`) or the derived kinds of
 * `DERIVED` (contracts/subscription.ts): never both in one stream (the server refuses the mix).
 */
export type StreamEventType = EventType | DerivedKind;

/**
 * The event a stream selecting `T` yields: `StreamEvent` (no argument, or `trade` / `book`) is a
 * market event; `StreamEvent<'bar_1m'>` a bar; `StreamEvent<StreamEventType>` any of them (narrow
 * it with `isBar` / `isBookSnapshot`). A derived stream's `seq` (and so its `Position`) is the
 * `DERIVED` sequence, a number space of its own: resume a derived stream only from a derived one.
 */
export type StreamEvent<T extends StreamEventType = EventType> = T extends EventType
  ? MarketStreamEvent
  : T extends BarKind
    ? BarStreamEvent
    : BookSnapshotStreamEvent;

/** Any event an iterator may yield, whatever it selected. */
export type AnyStreamEvent = StreamEvent<StreamEventType>;

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
      /** `own`: about the account's own events (`OWN` sequences): the own position moves. */
      feed?: 'own';
    }
  | { code: 'feed_recovered'; message: string; coin: string }
  /** A stored record that is not a valid event took this place (gRPC, disk-sync): the position moves past it. */
  | { code: 'record_skipped'; message: string; resumed_after: Position; coin: string }
  /**
   * The last item of a replay with `toTime`: every event stored up to it that the filters take has
   * been yielded; the iterator ends after this notice. `last_seq`: the position the replay covered
   * (the iterator's position becomes it: resume after it to go on live); `count`: the events the
   * last connection delivered (since its start or resume, not the iterator's total).
   */
  | { code: 'replay_complete'; message: string; last_seq: Position; count: number }
  /** A paced replay met a recorded gap over 5 s before event `seq`: it waited `waited_ms`, not `gap_ms` ÷ speed. */
  | { code: 'replay_gap_capped'; message: string; seq: Position; gap_ms: number; waited_ms: number }
  /**
   * A region other than home has not received the position yet (its copy is behind, or its link
   * to home is down): the stream resumed after it anyway and goes on. `last_seq`: this region's
   * newest; `home_last_seq`: the home region's (absent when it could not be asked).
   */
  | {
      code: 'region_lag';
      message: string;
      requested_last_event_id: Position;
      resumed_after: Position;
      first_seq: Position;
      last_seq: Position;
      home_last_seq?: Position;
    }
  | { code: string; message: string; [field: string]: unknown };

/** A non-terminal `event: error` (`coin_not_found`, `feed_stale`, `upstream_lag`): the stream goes on. */
export type StreamWarning = {
  code: SseCode;
  message: string;
  request_id: string;
  terminal: false;
  coin?: string;
};

/** One item of an iterator whose events are `E` (market events unless the stream selected derived kinds). */
export type StreamItem<E extends AnyStreamEvent = StreamEvent> =
  | { type: 'event'; seq: Position; event: E }
  | { type: 'notice'; notice: StreamNotice }
  | { type: 'warning'; warning: StreamWarning }
  /** The connection ended; the iterator reconnects after `delayMs` (attempt n of consecutive failures). */
  | { type: 'reconnecting'; attempt: number; delayMs: number; error: MdpError };

/**
 * What a stream delivers, on every transport: absent or empty lists mean "all" (for `eventTypes`:
 * all of `MD`'s; derived kinds are only ever delivered when named).
 */
export type StreamFilters<T extends StreamEventType = EventType> = {
  coins?: string[];
  eventTypes?: T[];
  sources?: Source[];
};

/** An instant: Unix milliseconds, a Date, or text (ISO 8601 with a time zone, or Unix ms digits). */
export type ReplayTime = number | Date | string;

/**
 * A replay by time, on every transport: the events the stream stored from `fromTime` (at or after
 * it) to `toTime` (at or before it), at `speed`. With `toTime` the iterator yields the
 * `replay_complete` notice and ends by itself; without it the replay hands over to live. A
 * reconnection sends the same window with its position, and the position wins, so a cut replay
 * goes on where it was. `from` (a position) given too also wins over `fromTime`.
 */
export type ReplayOptions = {
  /** Replay from the first event stored at or after this instant. */
  fromTime?: ReplayTime;
  /** End after the last event stored at or before this instant (needs no `fromTime`: live up to it). */
  toTime?: ReplayTime;
  /** `max` (default): as fast as the stream allows; N (0.01 to 10000): the recorded gaps divided by N. */
  speed?: number | 'max';
};

/** How every iterator resumes and reconnects, whatever its transport. */
export type ResumeOptions = ReplayOptions & {
  /**
   * Resume after this position (the events that follow it, as Last-Event-ID does): a platform
   * sequence, or the pair a stream with own events saved (`resumePosition()`, `parsePosition`).
   */
  from?: Position | ResumePosition;
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

export type StreamOptions<T extends StreamEventType = EventType> = StreamFilters<T> &
  ResumeOptions & {
    /**
     * The unified edge, e.g. `https://us.example.com` (or the full `/api/v1/unified/stream` URL), or
     * several in failover order, e.g. a US edge then a JP one (resuming-stream.ts `Endpoints`).
     */
    url: string | readonly string[];
    /** API key, sent as `x-api-key`. */
    key: string;
    /** A fetch implementation (default: the global one). */
    fetch?: typeof fetch;
  };
