/**
 * The answer of a rate limiter and how it is built from bucket levels. Pure.
 */
import { type BucketSpec, retryAfterSeconds } from '../../../contracts/limits.ts';
import { TOKEN_EPSILON } from './shared-bucket.ts';

export type RateDecision = {
  readonly admitted: boolean;
  /** Refill rate of the binding bucket, requests per second (Infinity for Quant). */
  readonly limit: number;
  /** Whole tokens left in the binding bucket after this request, best estimate. */
  readonly remaining: number;
  /** Seconds until the binding bucket is full again (integer ≥ 0). */
  readonly resetSeconds: number;
  /** HTTP `Retry-After`: integer ≥ 1 when rejected, 0 when admitted. */
  readonly retryAfterSeconds: number;
  /** Set when the shared store could not be reached: the request is refused (fail closed, 503). */
  readonly unavailable?: boolean;
};

/** Quant: no bucket, no I/O. */
export const UNLIMITED: RateDecision = Object.freeze({
  admitted: true,
  limit: Infinity,
  remaining: Infinity,
  resetSeconds: 0,
  retryAfterSeconds: 0,
});

/** Longest Retry-After reported, seconds (a bucket that can never refill must not say Infinity). */
const MAX_RETRY_AFTER_S = 3_600;

/**
 * Limit, remaining and reset of the binding bucket: the one with the fewest tokens (on a tie the
 * one that takes longer to fill). `tokens` are the best estimate of each bucket's level now.
 */
function binding(specs: readonly BucketSpec[], tokens: readonly number[]) {
  let best = { limit: Infinity, remaining: Infinity, resetSeconds: 0 };
  let bestFill = -1;
  specs.forEach((spec, i) => {
    const level = Math.max(0, tokens[i] ?? spec.burst);
    const remaining = Math.floor(level + TOKEN_EPSILON);
    const fillSeconds = Math.max(0, (spec.burst - level) / spec.rate);
    if (remaining < best.remaining || (remaining === best.remaining && fillSeconds > bestFill)) {
      best = { limit: spec.rate, remaining, resetSeconds: Math.ceil(fillSeconds - TOKEN_EPSILON) };
      bestFill = fillSeconds;
    }
  });
  return best;
}

export function admittedDecision(specs: readonly BucketSpec[], tokens: readonly number[]): RateDecision {
  return { admitted: true, ...binding(specs, tokens), retryAfterSeconds: 0 };
}

export function rejectedDecision(
  specs: readonly BucketSpec[],
  tokens: readonly number[],
  retryAfterMs: number,
): RateDecision {
  const { limit, resetSeconds } = binding(specs, tokens);
  return {
    admitted: false,
    limit,
    remaining: 0,
    resetSeconds,
    retryAfterSeconds: Math.min(MAX_RETRY_AFTER_S, retryAfterSeconds(retryAfterMs)),
  };
}

/** The store is unreachable: refuse rather than admit without a shared count. */
export function unavailableDecision(specs: readonly BucketSpec[]): RateDecision {
  return {
    admitted: false,
    limit: specs[0]?.rate ?? Infinity,
    remaining: 0,
    resetSeconds: 0,
    retryAfterSeconds: 1,
    unavailable: true,
  };
}
