/**
 * Slow answers for an address that keeps being refused (issue 27: another account keeps its
 * latency). A client that loops on a refusal (no key, made-up keys, a key past its rate limit)
 * gets its answers as fast as the edge can make them, and with a few requests in flight takes the
 * whole event loop from everyone else. So the edge guard asks here before it answers a refusal:
 * the first `REFUSALS_AT_ONCE_PER_ADDRESS` (100, then 50 a second) go at once; past that each is
 * held `REFUSAL_DELAY_MS` (1 s) first. The looping client is slowed to its requests in flight per
 * second, each costing a timer, and a client that honours Retry-After is never held.
 * What it never does: slow or refuse an admitted request (valid keys from the same address go on
 * at once: only refusals spend here), or hold without bound (at most `REFUSALS_HELD_MAX` answers
 * per process; past it, answered at once; addresses LRU-bounded by KeyedBuckets).
 */
import {
  LIMITER_MAX_SUBJECTS,
  REFUSAL_DELAY_MS,
  REFUSALS_AT_ONCE_PER_ADDRESS,
  REFUSALS_HELD_MAX,
} from '../../contracts/console-limits.ts';
import { KeyedBuckets } from './keyed-buckets.ts';

export class RefusalPacer {
  private readonly buckets: KeyedBuckets;
  private held = 0;

  constructor(
    private readonly delayMs = REFUSAL_DELAY_MS,
    private readonly heldMax = REFUSALS_HELD_MAX,
    spec = REFUSALS_AT_ONCE_PER_ADDRESS,
  ) {
    this.buckets = new KeyedBuckets(spec, LIMITER_MAX_SUBJECTS);
  }

  /** Answers held right now (metrics, tests). */
  get holding(): number {
    return this.held;
  }

  /** Null to answer a refusal of `address` at once, else a promise that settles when to answer it. */
  pace(address: string | undefined): Promise<void> | null {
    if (!address || this.buckets.take(address).admitted || this.held >= this.heldMax) return null;
    this.held++;
    return new Promise<void>((resolve) => {
      setTimeout(() => {
        this.held--;
        resolve();
      }, this.delayMs).unref();
    });
  }
}
