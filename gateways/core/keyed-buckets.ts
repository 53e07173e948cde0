/**
 * Token buckets keyed by a string (an address, an account, an email), for abuse limits that are not
 * a key's tier limit: console registration, login and key creation, failed API-key attempts. Uses
 * the reference bucket of `contracts/limits.ts`. Invariant: at most `maxKeys` buckets are held (an
 * LRU; a bucket evicted is a bucket forgotten, which only ever errs towards admitting), so memory
 * stays flat under any number of distinct callers. Per process: N gateways admit up to N times.
 */
import {
  type BucketSpec,
  fullBucket,
  refill,
  type Bucket as TokenBucket,
  tryTake,
} from '../../contracts/limits.ts';
import { LruCache } from './lru-cache.ts';

export type KeyedDecision = { admitted: boolean; retryAfterMs: number };

/** Buckets never outlive a full refill by much: after that they equal a new one. */
const idleMs = (spec: BucketSpec) => Math.ceil((spec.burst / spec.rate) * 1000) + 1000;

export class KeyedBuckets {
  private readonly buckets: LruCache<string, TokenBucket>;

  constructor(
    readonly spec: BucketSpec,
    maxKeys = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.buckets = new LruCache(maxKeys, idleMs(spec), now);
  }

  /** Takes one token for `key`: admitted, or refused with the wait until a token is back. */
  take(key: string): KeyedDecision {
    const now = this.now();
    const r = tryTake(this.buckets.get(key) ?? fullBucket(this.spec, now), now, this.spec);
    this.buckets.set(key, r.bucket);
    return { admitted: r.admitted, retryAfterMs: r.retryAfterMs };
  }

  /** Ms until `key` has a token (0: it has one now); takes nothing. */
  waitMs(key: string): number {
    const b = this.buckets.get(key);
    if (!b) return 0;
    const now = this.now();
    const tokens = refill(b.tokens, b.lastMs, now, this.spec.rate, this.spec.burst);
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / this.spec.rate) * 1000);
  }

  get size(): number {
    return this.buckets.size;
  }
}
