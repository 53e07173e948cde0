// https://github.com/binance/binance-spot-api-docs/blob/master/web-socket-streams.md#how-to-manage-a-local-order-book-correctly
// https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams/How-to-manage-a-local-order-book-correctly
/**
 * A Binance local book kept from a REST snapshot and diff-depth events, by the venue's recipe:
 * buffer diffs until a snapshot arrives, drop diffs with `u ≤ lastUpdateId`, the first applied diff
 * must straddle the snapshot (`U ≤ lastUpdateId + 1`), then every diff must follow the previous
 * one (spot: `U = previous u + 1`; USD-M futures, which send `pu`: `pu = previous u`).
 *
 * Invariant: while `synced`, the book equals the venue's book at `lastUpdateId`. Anything that
 * would break it is reported as a `gap` and the book is dropped (`unsynced`) until the caller
 * brings a new snapshot; a diff already applied (`u ≤ lastUpdateId`: a replayed or duplicated
 * frame) is `duplicate` and changes nothing. Pure: no I/O, no clock.
 */
import type { BookLevel } from '../../contracts/events.ts';
import { BookSide } from './book-side.ts';

/** A diff-depth event: its update-id range and the levels to set (size 0 deletes). */
export type DepthDiff = {
  /** `U`: first update id in the event. */
  first: number;
  /** `u`: final update id in the event. */
  last: number;
  /** `pu` (USD-M futures only): the previous event's `u`. */
  previous?: number | undefined;
  bids: readonly BookLevel[];
  asks: readonly BookLevel[];
};

export type DepthStep<D extends DepthDiff = DepthDiff> =
  | { kind: 'applied'; diff: D }
  | { kind: 'buffered' }
  | { kind: 'duplicate' }
  | { kind: 'gap'; reason: 'gap' | 'buffer_overflow' | 'stale_snapshot'; expected: number; got: number };

export class BinanceDepthSync<D extends DepthDiff = DepthDiff> {
  readonly bids = new BookSide(true);
  readonly asks = new BookSide(false);
  private synced = false;
  /** Right after a snapshot: the next diff must straddle it rather than follow a diff. */
  private straddle = false;
  private lastUpdateId = 0;
  private buffer: D[] = [];

  constructor(private readonly maxBuffered = 10_000) {}

  get isSynced(): boolean {
    return this.synced;
  }

  /** The update id the book is at (meaningful while synced). */
  get updateId(): number {
    return this.lastUpdateId;
  }

  /** A diff from the stream. Unsynced, it is kept for the next snapshot (bounded). */
  push(diff: D): DepthStep<D> {
    if (!this.synced) {
      if (this.buffer.length >= this.maxBuffered) {
        this.buffer = [diff];
        return { kind: 'gap', reason: 'buffer_overflow', expected: 0, got: diff.first };
      }
      this.buffer.push(diff);
      return { kind: 'buffered' };
    }
    return this.apply(diff);
  }

  /**
   * A REST snapshot: the book restarts from it and the buffered diffs are applied in order.
   * Returns one step per buffered diff; a `gap` among them (the snapshot is older than the
   * buffered stream) leaves the book unsynced, keeping the diffs after it for the next snapshot.
   */
  sync(lastUpdateId: number, bids: readonly BookLevel[], asks: readonly BookLevel[]): DepthStep<D>[] {
    this.bids.reset(bids);
    this.asks.reset(asks);
    this.lastUpdateId = lastUpdateId;
    this.synced = true;
    this.straddle = true;
    const buffered = this.buffer;
    this.buffer = [];
    const steps: DepthStep<D>[] = [];
    for (let i = 0; i < buffered.length; i++) {
      const step = this.apply(buffered[i] as D);
      if (step.kind === 'gap') {
        this.buffer.push(...buffered.slice(i + 1));
        steps.push({ ...step, reason: 'stale_snapshot' });
        return steps;
      }
      steps.push(step);
    }
    return steps;
  }

  /** Drops the book; diffs are buffered until the next `sync`. */
  unsync(keep?: D): void {
    this.synced = false;
    this.bids.reset();
    this.asks.reset();
    this.buffer = keep ? [keep] : [];
  }

  private apply(diff: D): DepthStep<D> {
    if (diff.last <= this.lastUpdateId) return { kind: 'duplicate' };
    const follows = this.straddle
      ? diff.first <= this.lastUpdateId + 1
      : diff.previous !== undefined
        ? diff.previous === this.lastUpdateId
        : diff.first === this.lastUpdateId + 1;
    if (!follows) {
      const expected = this.lastUpdateId + 1;
      this.unsync(diff);
      return { kind: 'gap', reason: 'gap', expected, got: diff.first };
    }
    for (const l of diff.bids) this.bids.set(l.price, l.size);
    for (const l of diff.asks) this.asks.set(l.price, l.size);
    this.lastUpdateId = diff.last;
    this.straddle = false;
    return { kind: 'applied', diff };
  }
}
