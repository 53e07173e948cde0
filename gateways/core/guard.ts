/**
 * The edge guard: one implementation for every surface, run before any stream opens or any
 * handler runs. `openGuard` admits everything (benchmarks and tests of other concerns); the
 * API-key guard (`api-key-guard.ts`) is what the service runs.
 */
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import type { Tier } from '../../contracts/limits.ts';

/** Which surface is asking: tiers, credentials and scopes are decided per surface. */
export type Surface = 'unified' | 'jsonrpc' | 'grpc' | 'disksync' | 'simulation';

export type GuardRequest = {
  surface: Surface;
  region: 'us' | 'jp';
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  requestId: string;
  /** The scope the operation needs from a key that has scopes (null: any valid key). */
  capability: Scope | null;
  /** Opening a stream (counts against the concurrent-stream cap until `release`). */
  stream: boolean;
};

/** Spec token bucket outcome, for 429s and the X-RateLimit-* headers. */
export type RateDecision = {
  admitted: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
  retryAfterSeconds: number;
  unavailable?: boolean;
};

export type Principal = {
  accountId: string | null;
  keyId: string | null;
  tier: Tier;
  /** Sources the key may read (chain scopes); null = all. */
  sources: ReadonlySet<string> | null;
  /** Aborts when the key is revoked while in use (→ auth_expired, UNAUTHENTICATED, 4002). */
  revoked: AbortSignal;
  rateLimit: RateDecision | null;
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

/** X-RateLimit-* (and Retry-After on a rejection) for HTTP responses. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  const finite = Number.isFinite(d.limit);
  const headers: Record<string, string> = finite
    ? {
        'x-ratelimit-limit': String(d.limit),
        'x-ratelimit-remaining': String(Math.max(0, Math.floor(d.remaining))),
        'x-ratelimit-reset': String(d.resetSeconds),
      }
    : {};
  if (!d.admitted) headers['retry-after'] = String(Math.max(1, d.retryAfterSeconds));
  return headers;
}

export const openGuard: Guard = {
  async admit() {
    return {
      accountId: null,
      keyId: null,
      tier: 'quant',
      sources: null,
      revoked: new AbortController().signal,
      rateLimit: null,
      release() {},
    };
  },
};
