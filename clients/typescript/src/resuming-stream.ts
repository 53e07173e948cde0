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
 */
import { DEFAULT_RETRY_MS, reconnectDelay, sleep } from './backoff.ts';
import { isMdpError, MdpError } from './errors.ts';
import { isReplayComplete, type ReplayWindow, replayWindow } from './replay-window.ts';
import type { AnyStreamEvent, Position, ResumeOptions, StreamEvent, StreamItem } from './stream-types.ts';

/**
 * What one connection yields: everything but the loop's own reconnection reports. Any event: what
 * the server sends is what the stream selected, so the iterator types its items by the selection.
 */
export type WireItem = Exclude<StreamItem<AnyStreamEvent>, { type: 'reconnecting' }>;

/** How a connection ended: `retry` = reconnect after the backoff, else end the iterator with `error`. */
export type Ended = { retry: boolean; error: MdpError };

/**
 * Opens one connection after `position` (null: live only, or where `window.fromMs` starts) and
 * yields its items in batches (what one read decoded: one await per batch, not per item, is the
 * client's hot path); returns how it ended. `window` is the iterator's replay by time, sent on
 * every connection with the position (empty: none). It must stop when `signal` aborts; a throw
 * ends the iterator with that error.
 */
export type Connect = (
  position: Position | null,
  signal: AbortSignal,
  window: ReplayWindow,
) => AsyncGenerator<readonly WireItem[], Ended>;

export type ResumingOptions = ResumeOptions & {
  /** First wait of the backoff (the SSE `retry:` equivalent). Default 1 s. */
  retryMs?: number;
};

/** `E`: the events the stream selected (market events by default; bars or snapshots for derived kinds). */
export class ResumingStream<E extends AnyStreamEvent = StreamEvent> implements AsyncIterable<StreamItem<E>> {
  /** The last sequence yielded (or where a notice moved it): resume from here. Null before any. */
  position: Position | null;
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
  constructor(
    private readonly opts: ResumingOptions,
    private readonly connect: Connect,
    private readonly retryMsOf: () => number = () => opts.retryMs ?? DEFAULT_RETRY_MS,
  ) {
    this.window = replayWindow(opts);
    this.position = opts.from ?? null;
    opts.signal?.addEventListener('abort', () => this.close(), { once: true });
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
      const wire = this.connect(this.position, conn.signal, this.window);
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
      const delayMs = this.delay(failures, ended.error);
      yield { type: 'reconnecting', attempt: failures, delayMs, error: ended.error };
      await sleep(delayMs, this.closer.signal);
    }
  }

  /**
   * The item to yield, or null for an event already yielded. `replay_complete` moves the position
   * to the replay's `last_seq` (what it covered, past events the filters left out).
   */
  private accept(item: WireItem): WireItem | null {
    if (item.type === 'event') {
      if (this.position !== null && item.seq <= this.position) return null;
      this.position = item.seq;
    } else if (item.type === 'notice') {
      const notice = item.notice as { resumed_after?: unknown; last_seq?: unknown };
      if (typeof notice.resumed_after === 'number') this.position = notice.resumed_after;
      else if (
        isReplayComplete(item) &&
        typeof notice.last_seq === 'number' &&
        (this.position === null || notice.last_seq > this.position)
      )
        this.position = notice.last_seq;
    }
    return item;
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
