/**
 * Writes and removes caches: events → MessagePack messages on `cache.<cache_key>`, then the
 * manifest in KV `caches`. The manifest is written last, so a cache is visible only when all its
 * events are stored; storing content that is already cached returns the existing manifest.
 */
import { type CacheManifest, cacheKeyOf, cacheSubject, contentHash } from '../../contracts/caches.ts';
import type { MarketEvent } from '../../contracts/events.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { encode } from '../../platform/codec.ts';
import { type Bucket, openBucket } from '../../platform/kv.ts';
import type { Nats } from '../../platform/nats.ts';

export type StoreRequest = {
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
  ) {}

  static async open(nats: Nats): Promise<CacheStore> {
    return new CacheStore(nats, await openBucket<CacheManifest>(nats, KV_BUCKETS.caches));
  }

  async store(req: StoreRequest): Promise<CacheManifest> {
    const hash = contentHash(req.events);
    const key = cacheKeyOf(req.source, req.symbol, hash);
    const existing = await this.manifests.get(key);
    if (existing) return existing;
    // A store attempt has its own ids: a cache deleted and stored again within the duplicate
    // window must not be dropped as a duplicate of its former self.
    const attempt = Date.now().toString(36);
    let stored = 0;
    let firstSeq = 0;
    let lastSeq = 0;
    for (let i = 0; i < req.events.length; i += BATCH) {
      const acks = await Promise.all(
        req.events.slice(i, i + BATCH).map((ev, j) => {
          const data = encode(ev);
          stored += data.length;
          return this.nats.js.publish(cacheSubject(key), data, { msgID: `${key}.${attempt}.${i + j}` });
        }),
      );
      if (i === 0) firstSeq = acks[0]?.seq ?? 0;
      lastSeq = acks.at(-1)?.seq ?? lastSeq;
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
    await this.manifests.put(key, manifest);
    return manifest;
  }

  get(key: string): Promise<CacheManifest | null> {
    return this.manifests.get(key);
  }

  async list(): Promise<CacheManifest[]> {
    return [...(await this.manifests.entries()).values()].sort((a, b) =>
      a.created_at.localeCompare(b.created_at),
    );
  }

  /** Removes one cache; false when it does not exist. */
  async delete(key: string): Promise<boolean> {
    if (!(await this.manifests.get(key))) return false;
    await this.manifests.delete(key);
    await this.nats.jsm.streams.purge(STREAMS.CACHE, { filter: cacheSubject(key) });
    return true;
  }

  /** Removes every cache; returns how many there were. */
  async deleteAll(): Promise<number> {
    const all = await this.manifests.entries();
    for (const key of all.keys()) await this.manifests.delete(key);
    await this.nats.jsm.streams.purge(STREAMS.CACHE);
    return all.size;
  }
}
