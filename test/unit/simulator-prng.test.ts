import { describe, expect, it } from 'vitest';
import {
  deriveSeed,
  hashString,
  normal,
  poisson,
  RandomStream,
  STREAM,
  uniform,
} from '../../contracts/prng.ts';

const N = 100_000;

/** Pearson chi-square statistic of values in [0, 1) over `buckets` equal buckets. */
function chiSquare(values: Float64Array, buckets: number): number {
  const counts = new Float64Array(buckets);
  for (const v of values) {
    const b = Math.floor(v * buckets);
    counts[b] = (counts[b] as number) + 1;
  }
  const expected = values.length / buckets;
  let chi = 0;
  for (const c of counts) chi += (c - expected) ** 2 / expected;
  return chi;
}

// 99 degrees of freedom: P(chi² > 148.23) = 0.001, so a sound generator fails 1 run in 1000
// (and the seeds here are fixed, so the outcome never changes between runs).
const CHI2_99_P001 = 148.23;

function moments(values: Float64Array): { mean: number; variance: number; kurtosis: number } {
  let mean = 0;
  for (const v of values) mean += v;
  mean /= values.length;
  let m2 = 0;
  let m4 = 0;
  for (const v of values) {
    m2 += (v - mean) ** 2;
    m4 += (v - mean) ** 4;
  }
  m2 /= values.length;
  m4 /= values.length;
  return { mean, variance: m2, kurtosis: m4 / m2 ** 2 };
}

describe('simulator prng: counter-based draws', () => {
  it('depends only on (seed, stream, index), whatever the call order', () => {
    const forward = Array.from({ length: 1000 }, (_, i) => uniform(7, STREAM.SIZE, i));
    const shuffled = new Map<number, number>();
    for (let j = 0; j < 1000; j++) {
      const i = (j * 617) % 1000; // 617 is coprime to 1000: a permutation
      shuffled.set(i, uniform(7, STREAM.SIZE, i));
    }
    expect(forward.map((_, i) => shuffled.get(i))).toEqual(forward);
    const stream = new RandomStream(7, STREAM.SIZE);
    expect(forward.map((_, i) => stream.uniform(i))).toEqual(forward);
    expect(normal(7, STREAM.PRICE, 3)).toBe(new RandomStream(7, STREAM.PRICE).normal(3));
  });

  it('is pinned: changing these values changes every generated dataset', () => {
    expect(uniform(42, STREAM.PRICE, 0)).toMatchInlineSnapshot(`0.40400164732309607`);
    expect(normal(42, STREAM.PRICE, 1)).toMatchInlineSnapshot(`0.6465804203489453`);
    expect(deriveSeed(42, 1, 2)).toMatchInlineSnapshot(`5485239612978391`);
  });

  it('separates seeds, streams and indices, including above 2^32', () => {
    const draws = new Set([
      uniform(5, STREAM.SIZE, 0),
      uniform(2 ** 40 + 5, STREAM.SIZE, 0),
      uniform(5, STREAM.SIDE, 0),
      uniform(5, STREAM.SIZE, 1),
      uniform(5, STREAM.SIZE, 2 ** 32 + 1),
      uniform(5, STREAM.SIZE, 2 ** 50),
    ]);
    expect(draws.size).toBe(6);
    expect(new Set(Object.values(STREAM)).size).toBe(Object.keys(STREAM).length);
  });

  it('gives 53-bit uniforms in [0, 1) with mean 1/2 and variance 1/12', () => {
    const stream = new RandomStream(1, STREAM.TRADE_TIME);
    const values = new Float64Array(N);
    let oddUnits = 0;
    for (let i = 0; i < N; i++) {
      const u = stream.uniform(i);
      values[i] = u;
      if ((u * 2 ** 53) % 2 === 1) oddUnits++;
    }
    expect(Math.min(...values)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...values)).toBeLessThan(1);
    expect(oddUnits / N).toBeCloseTo(0.5, 1); // the lowest of the 53 bits is random too
    const { mean, variance } = moments(values);
    // Standard errors: mean sqrt(1/12/N) ≈ 0.0009, variance ≈ 0.0002; bands are 5 of them.
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.0046);
    expect(Math.abs(variance - 1 / 12)).toBeLessThan(0.001);
  });

  it('passes a 100-bucket chi-square test along indices, seeds and streams', () => {
    const byIndex = new Float64Array(N);
    const bySeed = new Float64Array(N);
    const byStream = new Float64Array(N);
    for (let i = 0; i < N; i++) {
      byIndex[i] = uniform(99, STREAM.BOOK, i);
      bySeed[i] = uniform(i, STREAM.BOOK, 0);
      byStream[i] = uniform(99, i + 1000, 0);
    }
    expect(chiSquare(byIndex, 100)).toBeLessThan(CHI2_99_P001);
    expect(chiSquare(bySeed, 100)).toBeLessThan(CHI2_99_P001);
    expect(chiSquare(byStream, 100)).toBeLessThan(CHI2_99_P001);
  });

  it('has no lag-1 correlation between consecutive counters', () => {
    let sum = 0;
    for (let i = 0; i < N; i++)
      sum += (uniform(3, STREAM.SIDE, i) - 0.5) * (uniform(3, STREAM.SIDE, i + 1) - 0.5);
    const correlation = (sum / N) * 12;
    expect(Math.abs(correlation)).toBeLessThan(5 / Math.sqrt(N));
  });

  it('gives standard normals (mean 0, sd 1, kurtosis 3)', () => {
    const stream = new RandomStream(11, STREAM.BRIDGE);
    const values = Float64Array.from({ length: N }, (_, i) => stream.normal(i));
    const { mean, variance, kurtosis } = moments(values);
    expect(Math.abs(mean)).toBeLessThan(5 / Math.sqrt(N));
    expect(Math.abs(Math.sqrt(variance) - 1)).toBeLessThan(5 / Math.sqrt(2 * N));
    expect(Math.abs(kurtosis - 3)).toBeLessThan(5 * Math.sqrt(24 / N));
  });

  it('draws Poisson counts with mean = variance = the mean, by inversion and normal approximation', () => {
    for (const mean of [0.07, 2.5, 20, 400]) {
      const values = Float64Array.from({ length: 20_000 }, (_, i) =>
        poisson(mean, uniform(5, STREAM.TRADE_COUNT, 2 * i), uniform(5, STREAM.TRADE_COUNT, 2 * i + 1)),
      );
      const m = moments(values);
      expect(values.every((k) => Number.isInteger(k) && k >= 0)).toBe(true);
      expect(Math.abs(m.mean - mean)).toBeLessThan(5 * Math.sqrt(mean / 20_000));
      expect(m.variance / mean).toBeGreaterThan(0.93);
      expect(m.variance / mean).toBeLessThan(1.07);
    }
    expect(poisson(0, 0.5, 0.5)).toBe(0);
  });

  it('derives distinct integer seeds below 2^53, and hashes symbols', () => {
    const seeds = new Set<number>();
    for (let k = 0; k < 10_000; k++) seeds.add(deriveSeed(42, k));
    expect(seeds.size).toBe(10_000);
    for (const s of seeds) expect(Number.isSafeInteger(s) && s >= 0).toBe(true);
    expect(deriveSeed(42, 1, 2)).not.toBe(deriveSeed(42, 2, 1));
    expect(deriveSeed(Number.MAX_SAFE_INTEGER)).not.toBe(deriveSeed(Number.MAX_SAFE_INTEGER - 1));
    expect(hashString('BTC')).not.toBe(hashString('ETH'));
  });
});
