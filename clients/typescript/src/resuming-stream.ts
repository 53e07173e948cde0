/**
 * The reconnecting loop of the SSE, gRPC and disk-sync iterators, written once: a transport opens one
 * connection from a position and yields what it decodes; this loop keeps the position, drops any
 * sequence it has already yielded, moves the position where a `position_*` notice says the server
 * resumed, and after a connection ends either reconnects (the spec's backoff, backoff.ts) or ends
 * with the transport's typed error. A replay by time (replay-window.ts) is read once here and handed
 * to every connection with its position (the position wins on the server); `replay_complete` is
 * yielded and ends the iterator: nothing reconnects after a replay's clean end.
 *
 * Why exactly-once holds: the position only moves forward to a sequence just yielded (or to the
 * server's `resumed_after`), every connection starts after the position, and an event at or below
 * it is dropped; so across any number of connections a sequence is yielded at most once, and the
 * server's "after N" contract (no gap) gives every sequence in between.
 *
 * A stream with the account's own events (`own: true`) has two positions, each kept by that rule
 * on its own: the platform's (`position`, `MD` sequences) and the own one (`ownPosition`, `OWN`
 * sequences). An own event is compared with the own position only, a platform event with the
 * platform's only, and every connection starts after both.
 */
import { DEFAULT_RETRY_MS, reconnectDelay, sleep } from './backoff.ts';
import { isMdpError, MdpError } from './errors.ts';
import { isOwn, positionParts } from './own-events.ts';
import { isReplayComplete, type ReplayWindow, replayWindow } from './replay-window.ts';
import type {
  AnyStreamEvent,
  Position,
  ResumeOptions,
  ResumePosition,
  StreamEvent,
  StreamItem,
} from './stream-types.ts';

type EventItem = Extract<StreamItem<AnyStreamEvent>, { type: 'event' }>;

/**
 * What one connection yields: everything but the loop's own reconnection reports. Any event: what
 * the server sends is what the stream selected, so the iterator types its items by the selection.
 * An event's `at`: the stream's whole position after it, when the transport says it (an SSE id
 * `N:K`); not yielded.
 */
export type WireItem =
  | Exclude<StreamItem<AnyStreamEvent>, { type: 'reconnecting' | 'event' }>
  | (EventItem & { at?: ResumePosition });

/** How a connection ended: `retry` = reconnect after the backoff, else end the iterator with `error`. */
export type Ended = { retry: boolean; error: MdpError };

/**
 * Opens one connection after `position` (null: live only, or where `window.fromMs` starts) and,
 * for the account's own events, after `ownPosition` (null: none received yet; the server then
 * resumes them from the platform position's time, or live), and yields its items in batches (what one read decoded: one await per batch, not per item, is the
 * client's hot path); returns how it ended. `window` is the iterator's replay by time, sent on
 * every connection with the position (empty: none). It must stop when `signal` aborts; a throw
 * ends the iterator with that error.
 */
export type Connect = (
  position: Position | null,
  signal: AbortSignal,
  window: ReplayWindow,
  ownPosition: Position | null,
  /** The endpoint this connection goes to (one of the iterator's, in failover order). */
  endpoint: string,
) => AsyncGenerator<readonly WireItem[], Ended>;

/**
 * An edge's address, or several in order of preference (e.g. a US edge, then a JP one): a
 * retryable end moves to the next one with the same position (every region numbers events
 * alike), at once while some endpoint has not been tried since the last event, then with the
 * backoff; the first after the last. Throws on an empty list.
 */
export type Endpoints = string | readonly string[];

export function endpointList(e: Endpoints): readonly string[] {
  const list = typeof e === 'string' ? [e] : [...e];
  if (list.length === 0) throw new MdpError('invalid_params', 'no endpoint given');
  return list;
}

export type ResumingOptions = ResumeOptions & {
  /** First wait of the backoff (the SSE `retry:` equivalent). Default 1 s. */
  retryMs?: number;
};

/** `E`: the events the stream selected (market events by default; bars or snapshots for derived kinds). */
export class ResumingStream<E extends AnyStreamEvent = StreamEvent> implements AsyncIterable<StreamItem<E>> {
  /**
   * The last platform sequence yielded (or where a notice moved it). Null before any. With own
   * events in the stream, save `resumePosition()` instead: it has both parts.
   */
  position: Position | null;
  /** The last own (`OWN`) sequence yielded (or where an own notice moved it). Null before any. */
  ownPosition: Position | null;
  /** Connections opened so far after the first. */
  reconnects = 0;
  /** The replay by time every connection asks for (empty: none). */
  readonly window: ReplayWindow;
  private readonly closer = new AbortController();
  private started = false;

  /**
   * `retryMsOf`: the first wait of the backoff when it can change (SSE's `retry:` field). Throws an
   * `invalid_params` MdpError for a replay window the server would refuse (replay-window.ts).
   */
  private endpointAt = 0;

  constructor(
    private readonly opts: ResumingOptions,
    private readonly connect: Connect,
    private readonly retryMsOf: () => number = () => opts.retryMs ?? DEFAULT_RETRY_MS,
    private readonly endpoints: readonly string[] = [''],
  ) {
    this.window = replayWindow(opts);
    const from = positionParts(opts.from);
    this.position = from.seq;
    this.ownPosition = from.own;
    opts.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /**
   * Where to resume, both parts: pass it as `from` to any iterator (or `formatPosition` it for
   * the CLI). Null before any position. `own_seq` only once an own event was yielded (or given).
   */
  resumePosition(): ResumePosition | null {
    if (this.position === null) return null;
    return this.ownPosition === null
      ? { seq: this.position }
      : { seq: this.position, own_seq: this.ownPosition };
  }

  /** The endpoint the current (or next) connection goes to. */
  get endpoint(): string {
    return this.endpoints[this.endpointAt] as string;
  }

  /** Ends the iterator (the current `for await` finishes normally). */
  close(): void {
    this.closer.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamItem<E>> {
    if (this.started) throw new Error('a stream can be iterated once');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<StreamItem<E>, void, undefined> {
    let failures = 0;
    let connections = 0;
    while (!this.closer.signal.aborted) {
      if (connections++ > 0) this.reconnects++;
      const conn = new AbortController();
      const onClose = () => conn.abort();
      this.closer.signal.addEventListener('abort', onClose, { once: true });
      const wire = this.connect(this.position, conn.signal, this.window, this.ownPosition, this.endpoint);
      let ended: Ended;
      try {
        for (;;) {
          const next = await wire.next();
          if (next.done) {
            ended = next.value;
            break;
          }
          for (const wireItem of next.value) {
            const item = this.accept(wireItem);
            if (item === null) continue;
            if (item.type === 'event') failures = 0;
            yield item as StreamItem<E>;
            // The replay reached its end: the server closes cleanly; no reconnection follows.
            if (isReplayComplete(item)) return;
          }
        }
      } catch (err) {
        if (this.closer.signal.aborted) return;
        throw isMdpError(err) ? err : new MdpError('invalid_response', String(err), { cause: err });
      } finally {
        this.closer.signal.removeEventListener('abort', onClose);
        conn.abort();
        await wire.return(undefined as never).catch(() => {});
      }
      if (this.closer.signal.aborted) return;
      if (!ended.retry) throw ended.error;
      failures++;
      if (this.opts.maxAttempts !== undefined && failures >= this.opts.maxAttempts) throw ended.error;
      // Failover: the next endpoint, at once while one is left untried since the last event.
      const n = this.endpoints.length;
      this.endpointAt = (this.endpointAt + 1) % n;
      const delayMs = failures < n ? 0 : this.delay(failures - n + 1, ended.error);
      yield { type: 'reconnecting', attempt: failures, delayMs, error: ended.error };
      await sleep(delayMs, this.closer.signal);
    }
  }

  /**
   * The item to yield, or null for an event already yielded: an own event against the own
   * position, any other against the platform's. `replay_complete` moves the position to the
   * replay's `last_seq` (what it covered, past events the filters left out).
   */
  private accept(item: WireItem): WireItem | null {
    if (item.type === 'event') {
      if (isOwn(item.event)) {
        if (this.ownPosition !== null && item.seq <= this.ownPosition) return null;
        this.ownPosition = item.seq;
      } else {
        if (this.position !== null && item.seq <= this.position) return null;
        this.position = item.seq;
      }
      if (item.at !== undefined) return this.adopt(item, item.at);
    } else if (item.type === 'notice') {
      const notice = item.notice as { resumed_after?: unknown; last_seq?: unknown; feed?: unknown };
      if (typeof notice.resumed_after === 'number') {
        if (notice.feed === 'own') this.ownPosition = notice.resumed_after;
        else this.position = notice.resumed_after;
      } else if (
        isReplayComplete(item) &&
        typeof notice.last_seq === 'number' &&
        (this.position === null || notice.last_seq > this.position)
      )
        this.position = notice.last_seq;
    }
    return item;
  }

  /**
   * The server's whole position after an event (an SSE id `N:K`): a part this iterator has not
   * reached yet is taken (a live start's platform position, before any platform event), never one
   * behind it. The item is yielded without `at`.
   */
  private adopt(item: EventItem, at: ResumePosition): EventItem {
    if (this.position === null || at.seq > this.position) this.position = at.seq;
    if (at.own_seq !== undefined && (this.ownPosition === null || at.own_seq > this.ownPosition))
      this.ownPosition = at.own_seq;
    return { type: 'event', seq: item.seq, event: item.event };
  }

  private delay(failures: number, cause: MdpError): number {
    const opts: Parameters<typeof reconnectDelay>[2] = {};
    if (this.opts.maxDelayMs !== undefined) opts.maxDelayMs = this.opts.maxDelayMs;
    if (this.opts.random) opts.random = this.opts.random;
    if (cause.retryAfterSeconds !== null) opts.retryAfterMs = cause.retryAfterSeconds * 1000;
    return reconnectDelay(this.retryMsOf(), failures, opts);
  }
}

/** Calls `onIdle` once when `touch()` was not called for `idleMs` (a cut that sent nothing). */
export function watchIdle(idleMs: number, onIdle: () => void): { touch(): void; stop(): void } {
  let lastAt = Date.now();
  const timer = setInterval(
    () => {
      if (Date.now() - lastAt <= idleMs) return;
      clearInterval(timer);
      onIdle();
    },
    Math.max(10, idleMs / 4),
  );
  return { touch: () => (lastAt = Date.now()), stop: () => clearInterval(timer) };
}

/** The default of `idleTimeoutMs`: three missed 15 s heartbeats. */
export const DEFAULT_IDLE_TIMEOUT_MS = 45_000;
