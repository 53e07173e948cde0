/**
 * The edge guard: one implementation for every surface, run before any stream opens or any
 * handler runs. `openGuard` admits everything (benchmarks and tests of other concerns); the
 * API-key guard (`api-key-guard.ts`) is what the service runs.
 */
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import type { Tier } from '../../contracts/limits.ts';
import { revocationError } from './key-expiry.ts';

/** Which surface is asking: tiers, credentials and scopes are decided per surface. */
export type Surface = 'unified' | 'jsonrpc' | 'grpc' | 'disksync' | 'simulation';

export type GuardRequest = {
  surface: Surface;
  /** The edge's region; null for a surface in no region (`{base_url}`): `region:*` scopes do not apply. */
  region: 'us' | 'jp' | null;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  requestId: string;
  /** The client's address, when the transport knows it: failed key attempts are limited per address. */
  clientIp?: string;
  /** The scope the operation needs from a key that has scopes (null: any valid key). */
  capability: Scope | null;
  /** Opening a stream (counts against the key's concurrent-stream cap until `release`). */
  stream: boolean;
};

/** Spec token bucket outcome, for 429s and the X-RateLimit-* headers. */
export type RateDecision = {
  admitted: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  /** When refused, the wait in whole milliseconds (≥ 1), unrounded; absent: `retryAfterSeconds`. */
  retryAfterMs?: number;
  unavailable?: boolean;
};

export type Principal = {
  accountId: string | null;
  keyId: string | null;
  tier: Tier;
  /** Sources the key may read (chain scopes); null = all. */
  sources: ReadonlySet<string> | null;
  /** The key's scopes ([] = everything its tier allows); see `holdsScope` in `scopes.ts`. */
  scopes: readonly Scope[];
  /** Aborts when the key is revoked while in use (→ auth_expired, UNAUTHENTICATED, 4002). */
  revoked: AbortSignal;
  rateLimit: RateDecision | null;
  /**
   * Takes one more rate-limit token of the key for a further call of the same request (the calls
   * of a batch), without looking the key up again; throws the refusal (429, 503, or 401 when the
   * key was revoked meanwhile). Resolves with the bucket's state (null for an unlimited guard).
   */
  charge(): Promise<RateDecision | null>;
  /**
   * Takes up to `n` more tokens at once when the process holds them (no I/O): how many, and the
   * bucket's state after; null when it holds none or the key was revoked (then `charge`).
   */
  chargeNow?(n: number): { taken: number; decision: RateDecision } | null;
  /** Ends a stream opened with `stream: true` (idempotent). */
  release(): void;
};

export type Guard = {
  /** Resolves the principal, or throws an ApiError (401 / 403 / 429 per the catalogue). */
  admit(req: GuardRequest): Promise<Principal>;
};

/** A 429 that carries its bucket state, so every transport can send Retry-After and friends. */
export class RateLimitedError extends ApiError {
  constructor(
    readonly decision: RateDecision,
    readonly tier: Tier = 'basic',
    message?: string,
  ) {
    super('rate_limited', message ?? `rate limit exceeded; retry in ${decision.retryAfterSeconds} s`);
  }
}

/**
 * Call in the same turn as the first byte of a stream: a key revoked between admission and then
 * never fires the abort listener the stream adds afterwards, so it is refused here (401, before
 * the first byte, like any failure there): `key_expired` for a key that expired, else `key_revoked`.
 */
export function assertNotRevoked(p: Principal): void {
  if (p.revoked.aborted)
    throw revocationError(p.revoked, 'this API key was revoked before the stream opened');
}

/** A header value: a whole number ≥ `min`, never a fraction, NaN or Infinity. */
function wholeHeader(n: number, round: (x: number) => number, min: number): string {
  return String(Number.isFinite(n) ? Math.max(min, round(n)) : min);
}

/**
 * X-RateLimit-* (and Retry-After on a rejection) for HTTP responses, all whole numbers
 * (rate-limit/README.md, "Decision fields"): Limit is the tier's quota (Basic 100 per minute, Pro
 * 2,000 per second), Remaining what could be admitted now, Reset seconds until nothing holds back
 * (rounded up), Retry-After seconds until a request can be admitted (rounded up, at least 1).
 * Nothing but Retry-After for an unlimited tier.
 */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const finite = Number.isFinite(d.limit);
  const headers: Record<string, string> = finite
    ? {
        'x-ratelimit-limit': wholeHeader(d.limit, Math.floor, 0),
        'x-ratelimit-remaining': wholeHeader(d.remaining, Math.floor, 0),
        'x-ratelimit-reset': wholeHeader(d.resetSeconds, Math.ceil, 0),
      }
    : {};
  if (!d.admitted) headers['retry-after'] = wholeHeader(d.retryAfterSeconds, Math.ceil, 1);
  return headers;
}

export const openGuard: Guard = {
  async admit() {
    return {
      accountId: null,
      keyId: null,
      tier: 'quant',
      sources: null,
      scopes: [],
      revoked: new AbortController().signal,
      rateLimit: null,
      charge: async () => null,
      release() {},
    };
  },
};
