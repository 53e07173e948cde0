/**
 * The most recent events of the live tail, in stream order. `coveredFrom` is the promise the ring
 * keeps: every stream message with sequence ≥ coveredFrom that the tail has received is here, so a
 * resume from any position at or after it needs no JetStream consumer.
 */
import type { FeedEvent } from './feed-event.ts';

export class EventRing {
  private readonly slots: (FeedEvent | undefined)[];
  private head = 0; // index of the oldest event
  private count = 0;
  private covered: number;

  constructor(
    readonly capacity: number,
    coveredFrom: number,
  ) {
    this.slots = new Array(capacity);
    this.covered = coveredFrom;
  }

  get coveredFrom(): number {
    return this.covered;
  }

  get size(): number {
    return this.count;
  }

  /** Sequence of the newest event, or coveredFrom − 1 when empty. */
  get lastSeq(): number {
    return this.count === 0 ? this.covered - 1 : (this.at(this.count - 1).seq as number);
  }

  push(ev: FeedEvent): void {
    if (this.count === this.capacity) {
      const oldest = this.at(0);
      this.head = (this.head + 1) % this.capacity;
      this.count--;
      this.covered = oldest.seq + 1;
    }
    this.slots[(this.head + this.count) % this.capacity] = ev;
    this.count++;
  }

  /**
   * Up to `limit` events with seq > afterSeq, oldest first. Returns them with the sequence the
   * scan reached (the caller's next `afterSeq`) and whether it reached the newest event.
   */
  after(afterSeq: number, limit: number): { events: FeedEvent[]; reached: number; atEnd: boolean } {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).seq <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    const end = Math.min(this.count, lo + limit);
    const events: FeedEvent[] = [];
    for (let i = lo; i < end; i++) events.push(this.at(i));
    const reached =
      events.length > 0 ? (events[events.length - 1] as FeedEvent).seq : Math.max(afterSeq, this.lastSeq);
    return { events, reached, atEnd: end === this.count };
  }

  private at(i: number): FeedEvent {
    return this.slots[(this.head + i) % this.capacity] as FeedEvent;
  }
}
