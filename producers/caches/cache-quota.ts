/**
 * Per-account cache quota, held across every gateway process: how many caches an account holds
 * and their bytes (`stored_bytes`). One ledger per account in KV `cache_quota`, changed by
 * compare-and-swap (a message id per replaced revision: platform/kv-cas.ts), so two gateways
 * storing for one account at once cannot both take the last bytes. Invariant: the ledger never
 * counts less than the account holds. A cache is counted (reserved) before its first event is
 * published and stops counting when deleted, when its store failed, or once the `CACHE` stream's
 * max age (plus a minute) has passed, by which time its events are gone.
 */
import type { KV } from '@nats-io/kv';
import { ApiError } from '../../contracts/errors.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { openBucket } from '../../platform/kv.ts';
import { CasConflictError, type CasWriter, casChange, casWriter } from '../../platform/kv-cas.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

export type CacheQuotaLimits = { maxBytes: number; maxCaches: number; maxAgeMs: number };

/** Cache key → [bytes, counted until (Unix ms)]. */
type Ledger = { caches: Record<string, [number, number]> };

/** Counted this long past the stream's max age (its events are published just after the reservation). */
const AGE_MARGIN_MS = 60_000;

export class CacheQuota {
  private constructor(
    private readonly kv: KV,
    private readonly cas: CasWriter,
    private readonly limits: CacheQuotaLimits,
    private readonly now: () => number,
  ) {}

  static async open(nats: Nats, limits: CacheQuotaLimits, now = Date.now): Promise<CacheQuota> {
    const bucket = await openBucket<Ledger>(nats, KV_BUCKETS.cacheQuota, {
      ttlMs: limits.maxAgeMs + 2 * AGE_MARGIN_MS,
    });
    return new CacheQuota(bucket.raw, casWriter(nats.js, KV_BUCKETS.cacheQuota, 5_000), limits, now);
  }

  /** Counts `bytes` for cache `cacheKey` of the account, or throws 429 `quota_exceeded`. */
  reserve(accountId: string, cacheKey: string, bytes: number): Promise<void> {
    return this.swap(accountId, (ledger) => {
      if (ledger.caches[cacheKey]) return ledger; // being stored by another request: counted once
      const entries = Object.values(ledger.caches);
      const used = entries.reduce((n, [b]) => n + b, 0);
      const oldest = Math.min(...entries.map(([, until]) => until), this.now() + this.limits.maxAgeMs);
      if (entries.length >= this.limits.maxCaches)
        throw exceeded(
          `this account holds ${entries.length} caches; at most ${this.limits.maxCaches}: delete some (DELETE /mcp/caches/{cache_key})`,
          oldest - this.now(),
        );
      if (used + bytes > this.limits.maxBytes)
        throw exceeded(
          `caching these events would take this account's caches to ${used + bytes} bytes; at most ${this.limits.maxBytes}: delete some caches (DELETE /mcp/caches/{cache_key}) or cache fewer events`,
          oldest - this.now(),
        );
      const until = this.now() + this.limits.maxAgeMs + AGE_MARGIN_MS;
      return { caches: { ...ledger.caches, [cacheKey]: [bytes, until] } };
    });
  }

  /** Stops counting the account's caches `cacheKeys` (deleted, or never stored). */
  release(accountId: string, cacheKeys: readonly string[]): Promise<void> {
    return this.swap(accountId, (ledger) => {
      const caches = { ...ledger.caches };
      for (const k of cacheKeys) delete caches[k];
      return { caches };
    });
  }

  /** What the account's caches count now: bytes and caches. */
  async usage(accountId: string): Promise<{ bytes: number; caches: number }> {
    const e = await this.kv.get(accountId);
    const stored = e?.operation === 'PUT' && e.value.length > 0 ? decode<Ledger>(e.value) : { caches: {} };
    const entries = Object.values(this.live(stored).caches);
    return { bytes: entries.reduce((n, [b]) => n + b, 0), caches: entries.length };
  }

  private live(ledger: Ledger): Ledger {
    const now = this.now();
    return {
      caches: Object.fromEntries(Object.entries(ledger.caches).filter(([, [, until]]) => until > now)),
    };
  }

  private async swap(accountId: string, change: (ledger: Ledger) => Ledger): Promise<void> {
    try {
      await casChange<Ledger>(this.kv, this.cas, accountId, (current) =>
        change(this.live(current ?? { caches: {} })),
      );
    } catch (err) {
      if (!(err instanceof CasConflictError)) throw err;
      const busy = new ApiError(
        'conflict',
        'the account cache quota is being changed by other requests; retry',
      );
      busy.retryAfterSeconds = 1;
      throw busy;
    }
  }
}

function exceeded(message: string, freedInMs: number): ApiError {
  const err = new ApiError('quota_exceeded', message);
  err.retryAfterSeconds = Math.max(1, Math.ceil(freedInMs / 1_000));
  return err;
}
