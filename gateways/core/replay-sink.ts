/**
 * The sink of a replay by time (replay-window.ts), between the feed and the transport's sink:
 * - counts what it delivers (the `count` of `replay_complete`);
 * - paces, when a speed is given: each event waits the recorded gap since the one before it
 *   (`timestamp_ms`, the event's own time) divided by the speed. A gap longer than
 *   `REPLAY_MAX_GAP_MS` waits that bound instead, said in a `replay_gap_capped` notice; a gap
 *   that goes backwards (two venues' clocks) waits nothing. Delays are scheduled on one clock
 *   (each event due a gap after the one before), so timer lateness does not add up; after a
 *   stall longer than LATE_RESET_MS (a slow client) the schedule restarts from now instead of
 *   bursting to catch up;
 * - ends: past `limit` (a replay's last sequence) nothing is delivered, and while `hold` is on
 *   (the end is being looked up) events wait.
 * Backpressure: while events wait for their time, `ready()` is a promise, so the history reader
 * stops reading; the queue holds at most what one read hands over.
 */
import { REPLAY_MAX_GAP_MS, type ReplayGapCappedNotice } from '../../contracts/notices.ts';
import type { FeedEvent } from './feed-event.ts';
import type { FeedNotice, FeedSink } from './replay-source.ts';

/** A schedule this late (ms) restarts from now. */
const LATE_RESET_MS = 250;

const TIMESTAMP_KEY = '"timestamp_ms":';

/** An event's own time (`timestamp_ms`), read from its JSON without parsing it; null when absent. */
export function eventTimeMs(ev: FeedEvent): number | null {
  const at = ev.json.indexOf(TIMESTAMP_KEY);
  if (at < 0) return null;
  const value = Number.parseInt(ev.json.slice(at + TIMESTAMP_KEY.length, at + TIMESTAMP_KEY.length + 20), 10);
  return Number.isFinite(value) ? value : null;
}

export type ReplaySinkTarget = FeedSink & { notice(n: FeedNotice | ReplayGapCappedNotice): void };

export class ReplaySink implements FeedSink {
  /** Events delivered to the target. */
  count = 0;
  /** The sequence of the last event handed to this sink (delivered or waiting); 0 before any. */
  lastSeq = 0;
  private limit = Number.POSITIVE_INFINITY;
  private holding = false;
  /** The clock reading from which the next event holds (`holdFrom`), and what then runs. */
  private boundaryMs: number | null = null;
  private onBoundary: (() => void) | null = null;
  private readonly queue: FeedEvent[] = [];
  private head = 0;
  private lastTimeMs: number | null = null;
  /** `performance.now()` at which the last delivered event was due. */
  private dueAt = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The wait computed for the event at `head` (its capped-gap notice is sent once). */
  private headWait: number | null = null;
  /** The target asked to wait: pumping resumes when it is ready. */
  private targetBlocked = false;
  private waiters: (() => void)[] = [];
  private closed = false;

  /** `speed` null: as fast as the target takes them. */
  constructor(
    private readonly target: ReplaySinkTarget,
    private readonly speed: number | null,
  ) {}

  event(ev: FeedEvent): void {
    if (this.closed || ev.seq > this.limit) return;
    if (this.boundaryMs !== null && Date.now() >= this.boundaryMs) this.reachBoundary();
    this.lastSeq = ev.seq;
    if (this.speed === null && !this.holding && this.queued() === 0) {
      this.count++;
      this.target.event(ev);
      return;
    }
    this.queue.push(ev);
    this.pump();
  }

  notice(n: FeedNotice): void {
    this.target.notice(n);
  }
  feedStale(coin: string, silentMs: number, source?: string): void {
    this.target.feedStale(coin, silentMs, source);
  }
  feedRecovered(coin: string, source?: string): void {
    this.target.feedRecovered(coin, source);
  }

  ready(): Promise<void> | null {
    if (this.closed) return null;
    if (this.queued() > 0) return new Promise((resolve) => this.waiters.push(resolve));
    return this.target.ready();
  }

  /**
   * Events wait (the end is being looked up). The hold from `holdFrom` is spent too, whoever
   * held first: a second hold, after `endAt` had ended this one, would never end.
   */
  hold(): void {
    this.boundaryMs = null;
    this.onBoundary = null;
    this.holding = true;
  }

  /**
   * Holds from the first event handed over once the clock reads `ms` (and runs `reached`, once):
   * an event stored after a replay's `to` is received after it, so none is delivered before the
   * end is known, however late the caller's own timer for `to` fires on a busy process.
   */
  holdFrom(ms: number, reached: () => void): void {
    this.boundaryMs = ms;
    this.onBoundary = reached;
  }

  private reachBoundary(): void {
    const reached = this.onBoundary;
    this.hold();
    reached?.();
  }

  /** Nothing past `seq` is delivered (waiting events past it are dropped); holding ends. */
  endAt(seq: number): void {
    this.limit = seq;
    this.boundaryMs = null;
    this.onBoundary = null;
    this.holding = false;
    while (this.queue.length > this.head && (this.queue[this.queue.length - 1] as FeedEvent).seq > seq)
      this.queue.pop();
    this.pump();
  }

  /** Settles once every waiting event is delivered. */
  drained(): Promise<void> {
    return this.queued() === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
    this.head = 0;
    this.wake();
  }

  private queued(): number {
    return this.queue.length - this.head;
  }

  private pump(): void {
    if (this.timer || this.holding || this.closed || this.targetBlocked) return;
    while (this.queued() > 0) {
      const ev = this.queue[this.head] as FeedEvent;
      if (this.headWait === null) this.headWait = this.waitBefore(ev);
      const now = performance.now();
      const due = this.count === 0 ? now : this.dueAt + this.headWait;
      if (due > now + 1) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.pump();
        }, due - now);
        return;
      }
      this.dueAt = now - due > LATE_RESET_MS ? now : due;
      this.headWait = null;
      this.head++;
      this.count++;
      this.target.event(ev);
      const t = eventTimeMs(ev);
      if (t !== null) this.lastTimeMs = t;
      const blocked = this.target.ready();
      if (blocked && this.queued() > 0) {
        this.targetBlocked = true;
        blocked.then(() => {
          this.targetBlocked = false;
          this.pump();
        });
        return;
      }
    }
    this.queue.length = 0;
    this.head = 0;
    this.wake();
  }

  /** The wait (ms) before `ev`, from the recorded gap; a capped gap is said once, in a notice. */
  private waitBefore(ev: FeedEvent): number {
    if (this.speed === null || this.lastTimeMs === null) return 0;
    const t = eventTimeMs(ev);
    if (t === null) return 0;
    const gap = Math.max(0, t - this.lastTimeMs);
    if (gap <= REPLAY_MAX_GAP_MS) return gap / this.speed;
    const waited = REPLAY_MAX_GAP_MS / this.speed;
    this.target.notice({
      code: 'replay_gap_capped',
      message: `a recorded gap of ${gap} ms before event ${ev.seq} was shortened to ${REPLAY_MAX_GAP_MS} ms of stream time`,
      seq: ev.seq,
      gap_ms: gap,
      waited_ms: Math.round(waited),
    });
    return waited;
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }
}
