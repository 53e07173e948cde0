/**
 * API key lookups for one gateway process: HMAC the presented key, read the `keys` projection,
 * cache the answer (≤ 5 min; unknown keys 5 s). Revocations arrive over NATS (a core
 * subscription on the `ACCOUNTS` subjects) and take effect at once: the cache entry is replaced
 * and every open stream holding that key is told through its AbortSignal. After a reconnect the
 * cache is dropped and open holders are re-checked, so a revocation missed while away still lands.
 * A key's new scopes (`key_updated`) apply at once too: its cached copies are dropped and the pushed
 * scopes are laid over whatever KV answers until the projection surely has them.
 * Last-used times: a key's first use in a flush period is written at once (the console shows it
 * within moments), later uses in the period are coalesced and written once at its end.
 *
 * Invariants:
 * - Memory is flat: known keys, unknown keys and remembered revocations are LRUs with expiry
 *   (`maxKnown`, `maxUnknown`, `maxRevoked` entries), so a flood of random well-formed keys only
 *   churns the unknown-key LRU and never evicts a known key. Revocation signals (`holders`) are
 *   held weakly: an entry lives while a request or stream still holds its signal (the signal keeps
 *   its controller alive), and is dropped once none does, so the map is bounded by what is open.
 * - A revocation pushed here is remembered (by key id and by every hash) for `revokedMemoryMs`, even
 *   when the key was not cached: a later lookup that still finds `active` in KV (the projection not
 *   there yet) answers `revoked`. Revocation is irreversible, so remembering can never be wrong.
 * - Rotation: a key stored under a previous secret version is still found, and a `key_rehashed`
 *   event stores it under the current one (tried once per key per process per day; the event id
 *   dedupes across processes; where the NATS user may not publish `acct.>`, the try just fails).
 */
import { setMaxListeners } from 'node:events';
import { type AccountEvent, accountSubject, type KeyRecord, type Scope } from '../../contracts/accounts.ts';
import { KEY_CACHE_TTL_MS } from '../../contracts/limits.ts';
import { keyRehashedMsgId } from '../../contracts/message-ids.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { BUCKET_OPTIONS, type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import type { Secrets } from '../../platform/secrets.ts';
import { LruCache } from './lru-cache.ts';

export type KeyStoreOptions = {
  cacheTtlMs?: number;
  unknownTtlMs?: number;
  usageFlushMs?: number;
  /** Known keys cached at most. */
  maxKnown?: number;
  /** Unknown keys cached at most (negative answers). */
  maxUnknown?: number;
  /** Revocations remembered at most, and for how long, ms. */
  maxRevoked?: number;
  revokedMemoryMs?: number;
  /** How long a pushed scope change is laid over KV answers (well past the projection deadline), ms. */
  updateMemoryMs?: number;
};

/** Default bounds: ~100k known keys, 10k unknown, 100k revocations remembered for 24 h. */
export const KEY_STORE_DEFAULTS = {
  unknownTtlMs: 5_000,
  usageFlushMs: 30_000,
  maxKnown: 100_000,
  maxUnknown: 10_000,
  maxRevoked: 100_000,
  revokedMemoryMs: 86_400_000,
  updateMemoryMs: 60_000,
} as const;

const KEY_EVENTS = ['key_revoked', 'key_updated', 'plan_changed'] as const;

export class KeyStore {
  private readonly known: LruCache<string, KeyRecord>;
  private readonly unknown: LruCache<string, true>;
  private readonly revokedHashes: LruCache<string, true>;
  private readonly revokedIds: LruCache<string, true>;
  private readonly rehashed: LruCache<string, true>;
  /** Pushed `key_updated` scopes by key id. */
  private readonly updated: LruCache<string, Scope[]>;
  /** Keys whose last use was written in the current flush period. */
  private readonly usageWritten: LruCache<string, true>;
  /** Revocation signals by key hash, held weakly (see the invariants); `controllers` keeps each one's controller alive with it. */
  private readonly holders = new Map<string, WeakRef<AbortSignal>>();
  private readonly controllers = new WeakMap<AbortSignal, AbortController>();
  private readonly released = new FinalizationRegistry<string>((hash) => {
    if (this.holders.get(hash)?.deref() === undefined) this.holders.delete(hash);
  });
  private readonly usage = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private offReconnect: () => void = () => {};

  private constructor(
    private readonly nats: Nats,
    private readonly keys: Bucket<KeyRecord>,
    private readonly usageBucket: Bucket<number>,
    private readonly secrets: Secrets,
    private readonly log: Logger,
    private readonly opts: Required<KeyStoreOptions>,
  ) {
    this.known = new LruCache(opts.maxKnown, opts.cacheTtlMs);
    this.unknown = new LruCache(opts.maxUnknown, opts.unknownTtlMs);
    this.revokedHashes = new LruCache(opts.maxRevoked, opts.revokedMemoryMs);
    this.revokedIds = new LruCache(opts.maxRevoked, opts.revokedMemoryMs);
    this.rehashed = new LruCache(opts.maxUnknown, opts.revokedMemoryMs);
    this.updated = new LruCache(opts.maxKnown, opts.updateMemoryMs);
    this.usageWritten = new LruCache(opts.maxKnown, opts.usageFlushMs);
  }

  static async start(
    nats: Nats,
    secrets: Secrets,
    log: Logger,
    opts: KeyStoreOptions = {},
  ): Promise<KeyStore> {
    const store = new KeyStore(
      nats,
      await openBucket<KeyRecord>(nats, KV_BUCKETS.keys, BUCKET_OPTIONS[KV_BUCKETS.keys]),
      await openBucket<number>(nats, KV_BUCKETS.keyUsage, BUCKET_OPTIONS[KV_BUCKETS.keyUsage]),
      secrets,
      log,
      {
        ...KEY_STORE_DEFAULTS,
        ...opts,
        cacheTtlMs: Math.min(opts.cacheTtlMs ?? KEY_CACHE_TTL_MS, KEY_CACHE_TTL_MS),
      },
    );
    const subs = KEY_EVENTS.map((type) =>
      nats.nc.subscribe(accountSubject('*', type), {
        callback: (err, msg) => {
          if (!err) store.onAccountEvent(msg.data);
        },
      }),
    );
    const offReconnect = nats.onReconnect(() => void store.recheck());
    store.offReconnect = () => {
      offReconnect();
      for (const sub of subs) sub.unsubscribe();
    };
    store.timer = setInterval(() => void store.flushUsage(), store.opts.usageFlushMs);
    store.timer.unref();
    return store;
  }

  hash(key: string): string {
    return this.secrets.keyHash(key);
  }

  /** Entries held by the lookup caches (known + unknown); bounded by `maxKnown + maxUnknown`. */
  get cacheSize(): number {
    return this.known.size + this.unknown.size;
  }

  /** Lookups asked of this store since it started, cached or not (tests: refusals that need none). */
  lookups = 0;

  /** The record for a presented key (active or revoked), or null when unknown; `hash` is `hash(key)`. */
  async lookup(key: string, hash = this.hash(key)): Promise<KeyRecord | null> {
    this.lookups++;
    return this.cached(hash) ?? this.lookUp(key, hash);
  }

  /**
   * The record of a key this process knows, by its hash (no I/O), else undefined. A known key was
   * made by the platform, so it is well formed: the guard asks this before checking the format.
   */
  cached(hash: string): KeyRecord | undefined {
    const hit = this.known.get(hash);
    return hit ? this.current(hit) : undefined;
  }

  private async lookUp(key: string, hash: string): Promise<KeyRecord | null> {
    if (this.unknown.has(hash)) return null;
    let record = await this.verified(hash);
    // The older secrets' hashes only when the current one finds nothing: a key costs one HMAC.
    if (!record)
      for (const old of this.secrets.olderHashes(key)) {
        record = await this.verified(old);
        if (record) {
          this.rehash(record, hash);
          break;
        }
      }
    if (record) this.known.set(hash, this.current(record));
    else this.unknown.set(hash, true);
    return record ? this.current(record) : null;
  }

  /** Aborts when the key is revoked; shared by every stream holding the key in this process. */
  revocationSignal(hash: string): AbortSignal {
    let signal = this.holders.get(hash)?.deref();
    if (!signal) {
      const c = new AbortController();
      signal = c.signal;
      // One listener per open stream of the key: bounded by the tier's stream cap, not a leak.
      setMaxListeners(0, signal);
      this.controllers.set(signal, c);
      this.holders.set(hash, new WeakRef(signal));
      this.released.register(signal, hash);
    }
    if (this.revokedHashes.has(hash)) this.controllers.get(signal)?.abort();
    return signal;
  }

  /** Key hashes whose revocation signal is still held (bounded by the open requests and streams). */
  get holderCount(): number {
    return this.holders.size;
  }

  /** Records a use: written at once when it is the key's first in the flush period, else coalesced. */
  touch(keyId: string): void {
    const now = Date.now();
    if (!this.usageWritten.has(keyId)) {
      this.usageWritten.set(keyId, true);
      void this.writeUsage(keyId, now);
      return;
    }
    this.usage.set(keyId, now);
    if (this.usage.size >= this.opts.maxKnown) void this.flushUsage();
  }

  async stop(): Promise<void> {
    this.offReconnect();
    if (this.timer) clearInterval(this.timer);
    await this.flushUsage();
  }

  /** The KV record under `hash`, checked in constant time against it (defence in depth). */
  private async verified(hash: string): Promise<KeyRecord | null> {
    const record = await this.keys.get(hash);
    return record && this.secrets.sameHash(record.key_hash, hash) ? record : null;
  }

  /** The record with the revocations and scope changes pushed here that KV may not show yet. */
  private current(record: KeyRecord): KeyRecord {
    if (record.status !== 'active') return record;
    if (this.revokedIds.has(record.key_id) || this.revokedHashes.has(record.key_hash))
      return { ...record, status: 'revoked' };
    const scopes = this.updated.get(record.key_id);
    return scopes ? { ...record, scopes } : record;
  }

  /** Stores a key found under a previous secret under the current one (event-sourced, like every key change). */
  private rehash(record: KeyRecord, currentHash: string): void {
    if (record.status !== 'active' || this.rehashed.has(record.key_id)) return;
    this.rehashed.set(record.key_id, true);
    const ev: AccountEvent = {
      type: 'key_rehashed',
      account_id: record.account_id,
      key_id: record.key_id,
      key_hash: currentHash,
      at: Date.now(),
    };
    this.nats.js
      .publish(accountSubject(record.account_id, 'key_rehashed'), encode(ev), {
        msgID: keyRehashedMsgId(record.key_id, currentHash),
      })
      // Not retried here: a process whose NATS user may not write `acct.>` (edge gateways) only
      // verifies; the `{base_url}` process rehashes when the key is used there.
      .catch((err) => this.log.warn({ err: String(err), key_id: record.key_id }, 'key rehash not published'));
  }

  private onAccountEvent(data: Uint8Array): void {
    let ev: AccountEvent;
    try {
      ev = decode<AccountEvent>(data);
    } catch {
      return;
    }
    if (ev.type === 'key_revoked') {
      this.revokedIds.set(ev.key_id, true);
      for (const hash of [ev.key_hash, ...(ev.previous_hashes ?? [])]) this.revoked(hash);
    } else if (ev.type === 'key_updated') {
      this.updated.set(ev.key_id, ev.scopes);
      for (const hash of ev.key_hashes) this.known.delete(hash);
    } else if (ev.type === 'plan_changed') {
      for (const [hash, rec] of this.known) if (rec.account_id === ev.account_id) this.known.delete(hash);
    }
  }

  private revoked(hash: string): void {
    this.revokedHashes.set(hash, true);
    const rec = this.known.get(hash);
    if (rec) this.known.set(hash, { ...rec, status: 'revoked' });
    const signal = this.holders.get(hash)?.deref();
    if (signal) this.controllers.get(signal)?.abort();
    this.holders.delete(hash);
  }

  private async recheck(): Promise<void> {
    this.known.clear();
    this.unknown.clear();
    this.updated.clear(); // KV is the truth again: a change missed while away is in it by now
    for (const hash of [...this.holders.keys()]) {
      const record = await this.keys.get(hash).catch(() => null);
      if (record?.status === 'revoked') this.revoked(hash);
    }
  }

  private async flushUsage(): Promise<void> {
    const batch = [...this.usage];
    this.usage.clear();
    for (const [keyId, at] of batch) await this.writeUsage(keyId, at);
  }

  private async writeUsage(keyId: string, at: number): Promise<void> {
    await this.usageBucket
      .put(keyId, at)
      .catch((err) => this.log.warn({ err: String(err) }, 'last-used write failed'));
  }
}
