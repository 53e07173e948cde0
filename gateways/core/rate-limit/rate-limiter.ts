/**
 * Per-key rate limiting across gateway processes sharing one NATS: the composition root.
 * `createRateLimiter(nats)` → `check(keyId, tier)` → `RateDecision`. Rules: README.md.
 */
import { KV_BUCKETS } from '../../../contracts/streams.ts';
import type { Nats } from '../../../platform/nats.ts';
import { openKvLeaseStore } from './kv-lease-store.ts';
import { createLeasedRateLimiter, DEFAULT_LEASE_MS, type RateLimiter } from './leased-rate-limiter.ts';

export type { RateDecision } from './decision.ts';
export type { RateLimiter } from './leased-rate-limiter.ts';

export type RateLimiterOptions = {
  /** KV bucket holding the shared states (default `KV_BUCKETS.leases`). */
  bucket?: string;
  /** How long a batch of leased tokens may be spent before it is dropped, ms (default 250). */
  leaseMs?: number;
  /** Wall clock, ms (default `Date.now`); every process must share its meaning. */
  now?: () => number;
  /** Timeout of each KV operation, ms (default 1000): the longest a check waits before failing closed. */
  timeoutMs?: number;
};

/** Bucket-level max age of the KV bucket when this creates it, ms: 1 h, well above the 60 s window. */
export const LEASE_BUCKET_MAX_AGE_MS = 3_600_000;

export async function createRateLimiter(nats: Nats, opts: RateLimiterOptions = {}): Promise<RateLimiter> {
  const store = await openKvLeaseStore(nats, {
    bucket: opts.bucket ?? KV_BUCKETS.leases,
    maxAgeMs: LEASE_BUCKET_MAX_AGE_MS,
    timeoutMs: opts.timeoutMs ?? 1_000,
  });
  return createLeasedRateLimiter(store, {
    leaseMs: opts.leaseMs ?? DEFAULT_LEASE_MS,
    ...(opts.now ? { now: opts.now } : {}),
  });
}
