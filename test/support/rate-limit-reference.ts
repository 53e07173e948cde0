/**
 * The spec's limits written the plain way, to check rate limiters against: token buckets, tokens(t) =
 * min(burst, previous + rate × elapsed s), and the per-minute window, at most `limit` admissions in
 * [now − windowMs, now]; admit when every bucket has at least 1 and the window has room, then take one
 * token from each bucket and remember the time. Plus a seeded PRNG and counting helpers. Times are ms.
 */
import {
  type BucketSpec,
  type Tier,
  tierBuckets,
  tierWindow,
  type WindowSpec,
} from '../../contracts/limits.ts';

/** Same slack as the contract's reference `tryTake`. */
const EPSILON = 1e-9;

/** What a reference limiter enforces (the shape of the limiter's own `Limits`). */
export type ReferenceLimits = { buckets: readonly BucketSpec[]; window: WindowSpec | null };

/** A tier's limits straight from the contract. */
export function referenceLimits(tier: Tier): ReferenceLimits {
  return { buckets: tierBuckets(tier), window: tierWindow(tier) };
}

/** mulberry32: small, seeded, good enough to draw test sequences. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A reference limiter for one key: call it with each request time, in order; it says admit or not. */
export function referenceLimiter(limits: ReferenceLimits): (nowMs: number) => boolean {
  const { buckets, window } = limits;
  let tokens: number[] | null = null;
  let lastMs = 0;
  const admitted: number[] = [];
  return (nowMs) => {
    if (tokens === null) {
      tokens = buckets.map((s) => s.burst);
      lastMs = nowMs;
    }
    const at = Math.max(lastMs, nowMs);
    const elapsedSeconds = Math.max(0, nowMs - lastMs) / 1000;
    const now = buckets.map((s, i) => Math.min(s.burst, (tokens?.[i] ?? 0) + s.rate * elapsedSeconds));
    if (!now.every((t) => t + EPSILON >= 1)) return false;
    if (window) {
      // Admissions in [at − windowMs, at], counted from the newest back.
      let held = 0;
      for (let i = admitted.length - 1; i >= 0 && (admitted[i] ?? 0) >= at - window.windowMs; i--) held++;
      if (held >= window.limit) return false;
    }
    tokens = now.map((t) => Math.max(0, t - 1));
    lastMs = at;
    admitted.push(at);
    return true;
  };
}

/**
 * Replays admissions (sorted times) through the spec's buckets starting full at the first one,
 * letting a bucket go below zero instead of refusing. Returns the lowest level reached: ≥ 0 means
 * the spec could have admitted every one of them; −k means k tokens too many at some point.
 */
export function lowestLevel(specs: readonly BucketSpec[], admittedMs: readonly number[]): number {
  const levels = specs.map((s) => s.burst);
  let lowest = Math.min(...levels);
  let lastMs = admittedMs[0] ?? 0;
  for (const t of admittedMs) {
    const elapsedSeconds = Math.max(0, t - lastMs) / 1000;
    specs.forEach((s, i) => {
      levels[i] = Math.min(s.burst, (levels[i] ?? 0) + s.rate * elapsedSeconds) - 1;
      lowest = Math.min(lowest, levels[i] ?? 0);
    });
    lastMs = Math.max(lastMs, t);
  }
  return lowest;
}

/** Most admissions in any window [t, t + windowMs] (sorted times). */
export function maxInWindow(sortedMs: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sortedMs.length; hi++) {
    while ((sortedMs[hi] ?? 0) - (sortedMs[lo] ?? 0) > windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** When a request was sent and when its answer came: its decision was made somewhere in between. */
export type Span = { readonly sentMs: number; readonly doneMs: number };

/**
 * Most admissions surely decided within one window of `windowMs`: the requests sent and answered
 * inside [x, x + windowMs], over every x. A limiter that never admits more than `limit` in any window
 * keeps this ≤ `limit` whatever the round trips; anything above is a proven excess, independent of
 * latency (unlike counting answer times, which a slow answer can push next to a fast one).
 */
export function maxSurelyInWindow(spans: readonly Span[], windowMs: number): number {
  const sorted = [...spans].sort((a, b) => a.sentMs - b.sentMs);
  let best = 0;
  for (let i = 0; i < sorted.length; i++) {
    const from = sorted[i]?.sentMs ?? 0;
    let n = 0;
    for (let j = i; j < sorted.length; j++) if ((sorted[j]?.doneMs ?? Infinity) <= from + windowMs) n++;
    best = Math.max(best, n);
  }
  return best;
}

/** Admissions with fromMs < t ≤ toMs. */
export function countBetween(sortedMs: readonly number[], fromMs: number, toMs: number): number {
  return sortedMs.filter((t) => t > fromMs && t <= toMs).length;
}
