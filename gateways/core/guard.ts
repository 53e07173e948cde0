/**
 * The edge guard: runs before any stream opens or any handler runs. This issue ships the open
 * guard (every request admitted as an anonymous Quant principal); the accounts issue replaces it
 * with API-key authentication, scopes, tiers, regions and rate limits behind the same interface.
 */
import type { Tier } from '../../contracts/limits.ts';

/** Which surface is asking: tiers and scopes are decided per surface. */
export type Surface = 'unified' | 'jsonrpc' | 'grpc' | 'disksync' | 'simulation';

export type GuardRequest = {
  surface: Surface;
  region: 'us' | 'jp';
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  requestId: string;
};

export type Principal = {
  accountId: string | null;
  keyId: string | null;
  tier: Tier;
  scopes: ReadonlySet<string>;
  /** Aborts when the key is revoked while a stream is open (→ auth_expired, UNAUTHENTICATED, 4002). */
  revoked: AbortSignal;
  /** Call when a stream opened for this principal ends (concurrent-stream accounting). */
  release(): void;
};

export type Guard = {
  /** Resolves the principal, or throws an ApiError (401 / 403 / 429 per the catalogue). */
  admit(req: GuardRequest): Promise<Principal>;
};

export const openGuard: Guard = {
  async admit() {
    return {
      accountId: null,
      keyId: null,
      tier: 'quant',
      scopes: new Set(),
      revoked: new AbortController().signal,
      release() {},
    };
  },
};
