/**
 * platform/backoff.ts RetryBackoff (the connectors' reconnects and snapshot retries): the first
 * `immediate` retries at once, then base · 2^n capped at max, jitter within [½, 1] of it, and a
 * success starts over.
 */
import { describe, expect, it } from 'vitest';
import { fullJitterMs, RetryBackoff } from '../../platform/backoff.ts';

describe('RetryBackoff', () => {
  it('retries at once, then doubles up to the cap, and starts over after a success', () => {
    const b = new RetryBackoff({ baseMs: 100, maxMs: 1_000, immediate: 1 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([
      0, 100, 200, 400, 800, 1_000,
    ]);
    b.reset();
    expect([b.next(), b.next()]).toEqual([0, 100]);
  });

  it('draws a jittered wait within half and all of the backoff', () => {
    const low = new RetryBackoff({ baseMs: 100, maxMs: 1_000, jitter: true }, () => 0);
    const high = new RetryBackoff({ baseMs: 100, maxMs: 1_000, jitter: true }, () => 0.999_999);
    expect([low.next(), low.next(), low.next()]).toEqual([50, 100, 200]);
    expect([high.next(), high.next(), high.next()]).toEqual([100, 200, 400]);
  });

  it('draws full jitter below the backoff of the attempt', () => {
    const opts = { baseMs: 2, maxMs: 50 };
    expect(fullJitterMs(0, opts, () => 0.5)).toBe(1);
    expect(fullJitterMs(3, opts, () => 0.5)).toBe(8);
    expect(fullJitterMs(10, opts, () => 0.999)).toBeLessThan(50);
  });
});
