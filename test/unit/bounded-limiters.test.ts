/**
 * The bounded structures behind the key cache and the abuse limits: an LRU with expiry never holds
 * more than its cap (1M distinct random well-formed keys through a 10k cache), token buckets per
 * subject refuse past their burst and say when to retry, and failed-login backoff doubles, caps and
 * clears on success. Pure: clocks are passed in.
 */
import { describe, expect, it } from 'vitest';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import { KeyedBuckets } from '../../gateways/core/keyed-buckets.ts';
import { LruCache } from '../../gateways/core/lru-cache.ts';
import { FailureLockout } from '../../gateways/http/failure-lockout.ts';

/** Distinct keys pushed through the cache (1M by default; `MDP_LRU_KEYS` makes it smaller for a quick run). */
const KEYS = Number(process.env.MDP_LRU_KEYS ?? 1_000_000);

describe('LruCache', () => {
  it(`holds at most its cap after ${KEYS} distinct random well-formed keys`, () => {
    const cache = new LruCache<string, true>(10_000, 60_000);
    // Real keys are expensive to generate one by one: vary the body of one well-formed key instead.
    const base = generateApiKey();
    let largest = 0;
    for (let i = 0; i < KEYS; i++) {
      cache.set(`${base.slice(0, 20)}${i.toString(36).padStart(18, '0')}`, true);
      if (cache.size > largest) largest = cache.size;
    }
    expect(largest).toBeLessThanOrEqual(10_000);
    expect(largest).toBeGreaterThanOrEqual(5_000);
  });

  it('keeps what is used, evicts what is not, and forgets expired entries', () => {
    let now = 0;
    const cache = new LruCache<string, number>(4, 100, () => now);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3); // a, b now old
    expect(cache.get('a')).toBe(1); // a back in the young generation
    cache.set('d', 4); // young full (a, c): it becomes old, b dropped
    expect([cache.get('a'), cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([1, undefined, 3, 4]);
    expect(cache.size).toBeLessThanOrEqual(4);
    now = 100;
    expect(cache.get('a')).toBeUndefined();
  });
});

describe('KeyedBuckets', () => {
  it('admits the burst per subject, then refuses with the wait until the next token', () => {
    let now = 0;
    const buckets = new KeyedBuckets({ rate: 1, burst: 3 }, 10, () => now);
    expect([1, 2, 3].map(() => buckets.take('ip-a').admitted)).toEqual([true, true, true]);
    expect(buckets.take('ip-a')).toEqual({ admitted: false, retryAfterMs: 1_000 });
    expect(buckets.take('ip-b').admitted).toBe(true);
    now = 1_000;
    expect(buckets.waitMs('ip-a')).toBe(0);
    expect(buckets.take('ip-a').admitted).toBe(true);
  });

  it('tracks at most maxKeys subjects', () => {
    const buckets = new KeyedBuckets({ rate: 1, burst: 1 }, 100);
    for (let i = 0; i < 10_000; i++) buckets.take(`10.0.${i >> 8}.${i & 255}`);
    expect(buckets.size).toBeLessThanOrEqual(100);
  });
});

describe('FailureLockout', () => {
  it('locks after the free failures, doubling up to the cap, and clears on success', () => {
    let now = 0;
    const backoff = new FailureLockout(
      { freeFailures: 2, baseMs: 1_000, maxMs: 4_000, forgetAfterMs: 60_000 },
      10,
      () => now,
    );
    expect([backoff.fail('a'), backoff.fail('a')]).toEqual([0, 0]);
    expect(backoff.waitMs('a')).toBe(0);
    expect([backoff.fail('a'), backoff.fail('a'), backoff.fail('a'), backoff.fail('a')]).toEqual([
      1_000, 2_000, 4_000, 4_000,
    ]);
    expect(backoff.waitMs('a')).toBe(4_000);
    now = 4_000;
    expect(backoff.waitMs('a')).toBe(0);
    backoff.succeed('a');
    expect(backoff.fail('a')).toBe(0);
  });
});
