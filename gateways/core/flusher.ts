/**
 * Coalesces socket writes per task: an event fanned out to many clients only queues a string on
 * each; when the task that queued it ends (a microtask), every dirty connection writes its queue
 * in one call. (One write per event per client collapses throughput and grows memory without
 * bound.) The task is what delivered the events: one read of NATS bytes, however many messages it
 * holds, or one replay step; so a burst still goes out in few large writes.
 *
 * Why a microtask and not `setImmediate`: a live event written in the check phase waits for the
 * rest of the poll phase first, and on gRPC (node:http2 sends its frames from a native immediate,
 * which runs before the JS ones) the bytes then wait one more whole event-loop iteration before
 * they reach the socket. Written at the end of the task, they leave in the same iteration.
 * (Measured by the live phases of bench/grpc.ts and bench/disksync.ts.)
 * Except under wide fan-out: when a flush finds at least `WIDE_FLUSH` connections dirty, it waits
 * for `setImmediate` instead, so every NATS read of this event-loop iteration's poll phase goes out
 * in one write per connection, not one per read. A read holds about a dozen events, so at 1,000
 * clients a flush per read made 1,000 socket writes per dozen events and the gateway delivered
 * fewer events a second than a bare server that flushes on `setImmediate` (issue 29); a few
 * connections keep the same-iteration write.
 * Within one flush, connections whose queues hold the same frames share one chunk (`shared`): with
 * many clients on one selection the chunk is joined and encoded once, not once per socket.
 */
import type { Chunk } from './sink-parts.ts';

export type Flushable = { flush(): void };

/** Dirty connections from which a flush waits for the end of the poll phase (see the file comment). */
export const WIDE_FLUSH = 64;

export class Flusher {
  private dirty = new Set<Flushable>();
  private scheduled = false;
  private deferred = false;

  constructor(private readonly wide = WIDE_FLUSH) {}
  private readonly turn = new Map<string, Chunk>();

  /** The last chunk `shared` returned, and what it was asked for. */
  private last: { group: string; first: number; last: number; events: number; chunk: Chunk } | null = null;

  /**
   * The chunk of the queues of share group `group` holding events `first`…`last`, `events` of them
   * (OutboundQueue `sharable`), in this flush: made (by `make`) the first time it is asked for.
   * The connections of one selection ask in a row, so the last answer is checked first, with no
   * key built (at 1,000 connections this runs 1,000 times a flush).
   */
  shared(group: string, first: number, last: number, events: number, make: () => Chunk): Chunk {
    const l = this.last;
    if (l !== null && l.group === group && l.first === first && l.last === last && l.events === events)
      return l.chunk;
    const key = `${group}|${first}-${last}-${events}`;
    let chunk = this.turn.get(key);
    if (chunk === undefined) {
      chunk = make();
      this.turn.set(key, chunk);
    }
    this.last = { group, first, last, events, chunk };
    return chunk;
  }

  schedule(c: Flushable): void {
    this.dirty.add(c);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.run);
    }
  }

  private readonly run = (): void => {
    if (!this.deferred && this.dirty.size >= this.wide) {
      this.deferred = true;
      setImmediate(this.run);
      return;
    }
    this.deferred = false;
    this.scheduled = false;
    const batch = this.dirty;
    this.dirty = new Set();
    for (const c of batch) c.flush();
    this.turn.clear();
    this.last = null;
  };
}
