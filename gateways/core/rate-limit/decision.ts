/**
 * The answer of a rate limiter and how it is built from bucket levels and the window. Pure.
 *
 * Every figure is a whole number, so it goes into a header as is (README.md, "Decision fields"):
 * - `limit`: the tier's sustained quota, fixed per tier: the window's size where the tier has one
 *   (Basic: 100, per minute), else the refill rate of its slowest bucket (Pro: 2,000, per second);
 * - `remaining`: requests that could be admitted right now, the smaller of the remainders: whole
 *   tokens of each bucket, and the window's size minus the admissions in it (this one included);
 * - `resetSeconds`: seconds until nothing holds back: every bucket full and the window empty;
 * - `retryAfterSeconds`: when refused, seconds until a request can be admitted again (≥ 1);
 *   `retryAfterMs` the same wait unrounded (≥ 1 ms), for gRPC's `retry-after-ms`.
 */
import { retryAfterSeconds } from '../../../contracts/limits.ts';
import { inWindow, type Limits, leavesWindowAt, TOKEN_EPSILON } from './shared-bucket.ts';

export type RateDecision = {
  readonly admitted: boolean;
  /** The tier's quota: window size (Basic 100 per minute) or bucket rate (Pro 2,000/s); Infinity for Quant. */
  readonly limit: number;
  /** Requests that could be admitted now, after this one: the smaller remainder, best estimate. */
  readonly remaining: number;
  /** Seconds until every bucket is full and the window empty (integer ≥ 0). */
  readonly resetSeconds: number;
  /** HTTP `Retry-After`: integer ≥ 1 when rejected, 0 when admitted. */
  readonly retryAfterSeconds: number;
  /** When rejected, the wait in whole milliseconds (≥ 1), not rounded to seconds; absent: `retryAfterSeconds`. */
  readonly retryAfterMs?: number;
  /** Set when the shared store could not be reached: the request is refused (fail closed, 503). */
  readonly unavailable?: boolean;
};

/** What one process believes of a key now. */
export type LimitView = {
  /** Best estimate of each bucket's level now (shared level last seen, plus this process's batch). */
  readonly tokens: readonly number[];
  /** Admission times in the window, oldest first (empty without a window). */
  readonly admissions: readonly number[];
  readonly nowMs: number;
};

/** Quant: no bucket, no I/O. */
export const UNLIMITED: RateDecision = Object.freeze({
  admitted: true,
  limit: Infinity,
  remaining: Infinity,
  resetSeconds: 0,
  retryAfterSeconds: 0,
});

/** Longest Reset or Retry-After reported, seconds (a bucket that can never refill must not say Infinity). */
const MAX_SECONDS = 3_600;

/** X-RateLimit-Limit of a tier: its window's size, else its slowest bucket's rate (whole number). */
export function quotaOf(limits: Limits): number {
  if (limits.window) return limits.window.limit;
  let rate = Infinity;
  for (const s of limits.buckets) rate = Math.min(rate, s.rate);
  return Number.isFinite(rate) ? Math.floor(rate) : rate;
}

function figures(limits: Limits, view: LimitView) {
  let remaining = Infinity;
  let resetMs = 0;
  limits.buckets.forEach((spec, i) => {
    const level = Math.max(0, view.tokens[i] ?? spec.burst);
    remaining = Math.min(remaining, Math.floor(level + TOKEN_EPSILON));
    const fillMs = spec.rate > 0 ? (Math.max(0, spec.burst - level) / spec.rate) * 1000 : Infinity;
    resetMs = Math.max(resetMs, fillMs);
  });
  if (limits.window) {
    const held = inWindow(view.admissions, limits.window, view.nowMs);
    remaining = Math.min(remaining, limits.window.limit - held.length);
    const newest = held.at(-1);
    if (newest !== undefined) resetMs = Math.max(resetMs, leavesWindowAt(newest, limits.window) - view.nowMs);
  }
  return {
    limit: quotaOf(limits),
    remaining: Math.max(0, remaining),
    resetSeconds: Math.min(MAX_SECONDS, Math.max(0, Math.ceil(resetMs / 1000 - TOKEN_EPSILON))),
  };
}

export function admittedDecision(limits: Limits, view: LimitView): RateDecision {
  return { admitted: true, ...figures(limits, view), retryAfterSeconds: 0 };
}

export function rejectedDecision(limits: Limits, view: LimitView, retryAfterMs: number): RateDecision {
  const { limit, resetSeconds } = figures(limits, view);
  return {
    admitted: false,
    limit,
    remaining: 0,
    resetSeconds,
    retryAfterSeconds: Math.min(MAX_SECONDS, retryAfterSeconds(retryAfterMs)),
    retryAfterMs: Math.min(MAX_SECONDS * 1_000, Math.max(1, Math.ceil(retryAfterMs))),
  };
}

/** The store is unreachable: refuse rather than admit without a shared count. */
export function unavailableDecision(limits: Limits): RateDecision {
  return {
    admitted: false,
    limit: quotaOf(limits),
    remaining: 0,
    resetSeconds: 0,
    retryAfterSeconds: 1,
    retryAfterMs: 1_000,
    unavailable: true,
  };
}
