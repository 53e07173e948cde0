/**
 * Writes, reads and removes caches, always through their owner: events → compact JSON messages
 * (contracts/event-wire.ts) on `cache.<account_id>.<cache_key>.<event_type>`, then the manifest in KV `caches` under
 * `<account_id>.<cache_key>`. Every method takes the caller's account and addresses only that
 * account's keys and subjects, so another account's cache is simply absent (null / false / not
 * listed) and clearing all purges one account's subject space. The manifest is written last, so
 * a cache is visible only when all its events are stored; storing content that is already
 * cached (by the same account) returns the existing manifest.
 * Bounded: a cache is counted against its account's quota (cache-quota.ts) before its first event
 * is published (429 `quota_exceeded` past it); a store that fails takes its events back off the
 * stream and gives its count back, and a full `CACHE` stream (all accounts) answers 503
 * `storage_full`. Manifests expire with the stream's max age, as the events do.
 */
import {
  accountCacheFilter,
  accountCacheManifests,
  type CacheManifest,
  cacheFilter,
  cacheKeyOf,
  cacheManifestKey,
  cacheSubject,
  contentHash,
  isCacheKey,
} from '../../contracts/caches.ts';
import { ApiError } from '../../contracts/errors.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { cacheEventMsgId } from '../../contracts/message-ids.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { type Bucket, openBucket } from '../../platform/kv.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { CacheQuota, type CacheQuotaLimits } from './cache-quota.ts';

export type StoreRequest = {
  /** The owner: the account of the key that asked. */
  accountId: string;
  source: string;
  symbol: string;
  events: readonly MarketEvent[];
  rawJsonBytes: number;
  normalizerVersion: string;
};

const BATCH = 1_000;

export class CacheStore {
  private constructor(
    private readonly nats: Nats,
    readonly manifests: Bucket<CacheManifest>,
    readonly quota: CacheQuota,
  ) {}

  static async open(nats: Nats, limits: CacheQuotaLimits): Promise<CacheStore> {
    const manifests = await openBucket<CacheManifest>(nats, KV_BUCKETS.caches, { ttlMs: limits.maxAgeMs });
    // A bucket made before manifests expired gets their max age (opening never changes a bucket).
    const stream = `KV_${KV_BUCKETS.caches}`;
    const maxAge = limits.maxAgeMs * 1_000_000;
    const info = await nats.jsm.streams.info(stream);
    if (info.config.max_age !== maxAge)
      await nats.jsm.streams.update(stream, { ...info.config, max_age: maxAge });
    return new CacheStore(nats, manifests, await CacheQuota.open(nats, limits));
  }

  async store(req: StoreRequest): Promise<CacheManifest> {
    const hash = contentHash(req.events);
    const key = cacheKeyOf(req.accountId, req.source, req.symbol, hash);
    const existing = await this.get(req.accountId, key);
    if (existing) return existing;
    const encoded = req.events.map((ev) => encodeStoredEvent(ev));
    const stored = encoded.reduce((n, d) => n + d.length, 0);
    await this.quota.reserve(req.accountId, key, stored);
    // A store attempt has its own ids: a cache deleted and stored again within the duplicate
    // window must not be dropped as a duplicate of its former self.
    const attempt = Date.now().toString(36);
    let firstSeq = 0;
    let lastSeq = 0;
    try {
      for (let i = 0; i < req.events.length; i += BATCH) {
        const acks = await Promise.all(
          req.events.slice(i, i + BATCH).map((ev, j) =>
            this.nats.js.publish(cacheSubject(req.accountId, key, ev.event_type), encoded[i + j], {
              msgID: cacheEventMsgId(key, attempt, i + j),
            }),
          ),
        );
        if (i === 0) firstSeq = acks[0]?.seq ?? 0;
        lastSeq = acks.at(-1)?.seq ?? lastSeq;
      }
    } catch (err) {
      await this.nats.jsm.streams
        .purge(STREAMS.CACHE, { filter: cacheFilter(req.accountId, key) })
        .catch(() => {});
      await this.quota.release(req.accountId, [key]).catch(() => {});
      if (isStreamFull(err)) {
        const full = new ApiError('storage_full', 'the cache store is full; retry later');
        full.retryAfterSeconds = 60;
        throw full;
      }
      throw err;
    }
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (const e of req.events) {
      // A loop, not Math.min(...): spreading 100k+ arguments overflows the stack.
      if (e.timestamp_ms < first) first = e.timestamp_ms;
      if (e.timestamp_ms > last) last = e.timestamp_ms;
    }
    const manifest: CacheManifest = {
      cache_key: key,
      account_id: req.accountId,
      source: req.source,
      symbol: req.symbol,
      created_at: new Date().toISOString(),
      event_count: req.events.length,
      first_timestamp_ms: first,
      last_timestamp_ms: last,
      content_hash: hash,
      normalizer_version: req.normalizerVersion,
      raw_json_bytes: req.rawJsonBytes,
      stored_bytes: stored,
      first_seq: firstSeq,
      last_seq: lastSeq,
    };
    await this.manifests.put(cacheManifestKey(req.accountId, key), manifest);
    return manifest;
  }

  /** The account's cache `key`; null when it has none by that name (malformed keys included). */
  get(accountId: string, key: string): Promise<CacheManifest | null> {
    if (!isCacheKey(key)) return Promise.resolve(null);
    return this.manifests.get(cacheManifestKey(accountId, key));
  }

  /** The account's caches, oldest first. */
  async list(accountId: string): Promise<CacheManifest[]> {
    const out: CacheManifest[] = [];
    for await (const k of await this.manifests.raw.keys(accountCacheManifests(accountId))) {
      const e = await this.manifests.raw.get(k);
      if (e && e.operation === 'PUT' && e.value.length > 0) out.push(decode<CacheManifest>(e.value));
    }
    return out.sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** Removes one of the account's caches; false when the account has no such cache. */
  async delete(accountId: string, key: string): Promise<boolean> {
    if (!(await this.get(accountId, key))) return false;
    await this.manifests.delete(cacheManifestKey(accountId, key));
    await this.nats.jsm.streams.purge(STREAMS.CACHE, { filter: cacheFilter(accountId, key) });
    await this.quota.release(accountId, [key]);
    return true;
  }

  /** Removes every cache of the account (no other's); returns how many there were. */
  async deleteAll(accountId: string): Promise<number> {
    const mine = await this.list(accountId);
    for (const m of mine) await this.manifests.delete(cacheManifestKey(accountId, m.cache_key));
    await this.nats.jsm.streams.purge(STREAMS.CACHE, { filter: accountCacheFilter(accountId) });
    await this.quota.release(
      accountId,
      mine.map((m) => m.cache_key),
    );
    return mine.length;
  }
}

/** A publish refused because the stream is at its byte or message limit (discard `new`). */
const isStreamFull = (err: unknown): boolean =>
  /maximum (bytes|messages) exceeded|resource limits exceeded|insufficient resources/i.test(String(err));
