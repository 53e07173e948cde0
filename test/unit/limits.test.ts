import { describe, expect, it } from 'vitest';
import {
  ERROR_LOG_RETENTION_DAYS,
  FEED_STALE_AFTER_MS,
  fullBucket,
  KEY_CACHE_TTL_MS,
  MAX_BODY_BYTES,
  MAX_GRPC_DEPTH,
  MAX_JSONRPC_BATCH,
  MAX_WS_FRAME_BYTES,
  MIN_TLS_VERSION,
  refill,
  retryAfterSeconds,
  TIER_LIMITS,
  TIERS,
  tierAllows,
  tierBuckets,
  tierWindow,
  tryTake,
  WS_CONNECTIONS_PER_KEY,
  WS_HEARTBEAT_TIMEOUT_MS,
} from '../../contracts/limits.ts';
import { createLeasedRateLimiter } from '../../gateways/core/rate-limit/leased-rate-limiter.ts';
import { createMemoryLeaseStore } from '../../gateways/core/rate-limit/memory-lease-store.ts';

describe('tier limits match the spec', () => {
  it('has the three tiers, lowest first', () => {
    expect(TIERS).toEqual(['basic', 'pro', 'quant']);
  });

  it('Basic: 100 per minute, 10 per second, burst 25', () => {
    expect(TIER_LIMITS.basic).toMatchObject({ perMinute: 100, ratePerSecond: 10, burst: 25 });
  });

  it('Pro: 120,000 per minute, 2,000 per second, burst 500', () => {
    expect(TIER_LIMITS.pro).toMatchObject({ perMinute: 120_000, ratePerSecond: 2_000, burst: 500 });
  });

  it('Quant: unlimited', () => {
    expect(TIER_LIMITS.quant).toMatchObject({
      perMinute: Infinity,
      ratePerSecond: Infinity,
      burst: Infinity,
    });
    expect(tierBuckets('quant')).toEqual([]);
  });

  it('JSON-RPC for all; gRPC and unified stream Pro and above; disk-sync Quant only', () => {
    for (const tier of TIERS) expect(tierAllows(tier, 'jsonrpc')).toBe(true);
    expect([tierAllows('basic', 'grpc'), tierAllows('pro', 'grpc'), tierAllows('quant', 'grpc')]).toEqual([
      false,
      true,
      true,
    ]);
    expect(TIERS.map((t) => tierAllows(t, 'unified'))).toEqual([false, true, true]);
    expect(TIERS.map((t) => tierAllows(t, 'disksync'))).toEqual([false, false, true]);
  });

  it('has no concurrent streams without a stream transport, and more streams on higher tiers', () => {
    expect(TIER_LIMITS.basic.concurrentStreams).toBe(0);
    expect(TIER_LIMITS.pro.concurrentStreams).toBeLessThan(TIER_LIMITS.quant.concurrentStreams);
    expect(TIER_LIMITS.basic.subscriptions).toBeLessThan(TIER_LIMITS.pro.subscriptions);
    expect(TIER_LIMITS.pro.subscriptions).toBeLessThan(TIER_LIMITS.quant.subscriptions);
  });
});

describe('other limits match the spec', () => {
  it('has the spec values', () => {
    expect(MAX_BODY_BYTES).toBe(1_048_576);
    expect(MAX_JSONRPC_BATCH).toBe(100);
    expect(MAX_GRPC_DEPTH).toBe(1000);
    expect(MAX_WS_FRAME_BYTES).toBe(4 * 1_048_576);
    expect(WS_HEARTBEAT_TIMEOUT_MS).toBe(30_000);
    expect(WS_CONNECTIONS_PER_KEY).toBe(1);
    expect(FEED_STALE_AFTER_MS).toBe(60_000);
    expect(KEY_CACHE_TTL_MS).toBe(5 * 60_000);
    expect(MIN_TLS_VERSION).toBe('TLSv1.2');
    expect(ERROR_LOG_RETENTION_DAYS).toBe(30);
  });
});

describe('refill follows tokens(t) = min(burst, previous + rate × elapsed seconds)', () => {
  it('adds rate × elapsed seconds', () => {
    expect(refill(0, 0, 500, 10, 25)).toBe(5);
    expect(refill(2.5, 1_000, 1_250, 2, 25)).toBe(3);
  });

  it('caps at the burst', () => {
    expect(refill(20, 0, 10_000, 10, 25)).toBe(25);
  });

  it('adds nothing when no time or negative time elapsed', () => {
    expect(refill(3, 1_000, 1_000, 10, 25)).toBe(3);
    expect(refill(3, 1_000, 900, 10, 25)).toBe(3);
  });

  it('is full at once for an infinite rate, even with no elapsed time', () => {
    expect(refill(0, 5, 5, Infinity, Infinity)).toBe(Infinity);
  });
});

describe('tryTake admits while at least one token is left and consumes one', () => {
  const spec = { rate: 10, burst: 25 };

  it('admits a full burst at once, then rejects with the time until the next token', () => {
    let bucket = fullBucket(spec, 0);
    for (let i = 0; i < 25; i++) {
      const r = tryTake(bucket, 0, spec);
      expect(r.admitted).toBe(true);
      bucket = r.bucket;
    }
    const rejected = tryTake(bucket, 0, spec);
    expect(rejected).toMatchObject({ admitted: false, retryAfterMs: 100 });
    expect(retryAfterSeconds(rejected.retryAfterMs)).toBe(1);
    expect(tryTake(rejected.bucket, 100, spec).admitted).toBe(true);
  });

  it('sustains the rate: 10 per second once the burst is spent', () => {
    let bucket = { tokens: 0, lastMs: 0 };
    let admitted = 0;
    for (let t = 0; t <= 10_000; t += 10) {
      const r = tryTake(bucket, t, spec);
      if (r.admitted) admitted++;
      bucket = r.bucket;
    }
    expect(admitted).toBe(100);
  });

  it('gives Basic a burst of 25, then 10/s, and at most 100 in any 60 s (the product limiter)', async () => {
    expect(tierBuckets('basic')).toEqual([{ rate: 10, burst: 25 }]);
    expect(tierWindow('basic')).toEqual({ limit: 100, windowMs: 60_000 });
    expect(tierWindow('pro')).toBeNull();
    // The gateways' own limiter (buckets, window and leases) on a simulated clock, asked every 10 ms.
    let clock = 0;
    const limiter = createLeasedRateLimiter(createMemoryLeaseStore(), { now: () => clock, holderId: 'h' });
    const admittedAt: number[] = [];
    for (let t = 0; t < 600_000; t += 10) {
      clock = t;
      if ((await limiter.check('key_basic', 'basic')).admitted) admittedAt.push(t);
    }
    await limiter.close();
    expect(admittedAt.filter((t) => t < 1_000)).toHaveLength(25 + 9);
    expect(admittedAt[99]).toBe(7_500);
    expect(admittedAt.filter((t) => t >= 60_000 && t < 120_000)).toHaveLength(100);
    for (let i = 100; i < admittedAt.length; i++)
      expect((admittedAt[i] as number) - (admittedAt[i - 100] as number)).toBeGreaterThan(60_000);
    expect(admittedAt).toHaveLength(1_000);
  });
});
