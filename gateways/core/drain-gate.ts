/**
 * A Wire's `onceDrain` (gateways/core/sink-parts.ts), one rule for every transport that counts
 * its own unsent bytes: a callback runs once they are down to the sink's DRAIN_MARK, checked
 * whenever a write completes, so the sink refills while bytes are still in flight and a catch-up's
 * socket or stream never runs dry; past SOCKET_BUFFER the sink blocks again, so the bound on what
 * a wire holds is unchanged.
 */
import { DRAIN_MARK } from './buffered-sink.ts';

export class DrainGate {
  private waiters: (() => void)[] = [];

  /** `buffered`: the wire's unsent bytes now. */
  constructor(private readonly buffered: () => number) {}

  onceDrain(cb: () => void): void {
    if (this.buffered() <= DRAIN_MARK) queueMicrotask(cb);
    else this.waiters.push(cb);
  }

  /** Call when a write has completed: the waiters run if the mark is reached. */
  written(): void {
    if (this.waiters.length === 0 || this.buffered() > DRAIN_MARK) return;
    const w = this.waiters;
    this.waiters = [];
    for (const cb of w) cb();
  }
}
