/**
 * API key lookups for one gateway process: HMAC the presented key, read the `keys` projection,
 * cache the answer (≤ 5 min; unknown keys 5 s). Revocations arrive over NATS (a core
 * subscription on the `ACCOUNTS` subjects) and take effect at once: the cache entry is replaced
 * and every open stream holding that key is told through its AbortSignal. After a reconnect the
 * cache is dropped and open holders are re-checked, so a revocation missed while away still lands.
 * Last-used times are coalesced in memory and written once per flush period.
 */
import type { Subscription } from '@nats-io/transport-node';
import type { AccountEvent, KeyRecord } from '../../contracts/accounts.ts';
import { KEY_CACHE_TTL_MS } from '../../contracts/limits.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { decode } from '../../platform/codec.ts';
import { BUCKET_OPTIONS, type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { Secrets } from '../../platform/secrets.ts';

export type KeyStoreOptions = { cacheTtlMs?: number; unknownTtlMs?: number; usageFlushMs?: number };

type Cached = { record: KeyRecord | null; until: number };

export class KeyStore {
  private readonly cache = new Map<string, Cached>();
  private readonly holders = new Map<string, AbortController>();
  private readonly usage = new Map<string, number>();
  private sub: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private offReconnect: () => void = () => {};

  private constructor(
    private readonly keys: Bucket<KeyRecord>,
    private readonly usageBucket: Bucket<number>,
    private readonly secrets: Secrets,
    private readonly log: Logger,
    private readonly opts: Required<KeyStoreOptions>,
  ) {}

  static async start(
    nats: Nats,
    secrets: Secrets,
    log: Logger,
    opts: KeyStoreOptions = {},
  ): Promise<KeyStore> {
    const store = new KeyStore(
      await openBucket<KeyRecord>(nats, KV_BUCKETS.keys, BUCKET_OPTIONS[KV_BUCKETS.keys]),
      await openBucket<number>(nats, KV_BUCKETS.keyUsage, BUCKET_OPTIONS[KV_BUCKETS.keyUsage]),
      secrets,
      log,
      {
        cacheTtlMs: Math.min(opts.cacheTtlMs ?? KEY_CACHE_TTL_MS, KEY_CACHE_TTL_MS),
        unknownTtlMs: opts.unknownTtlMs ?? 5_000,
        usageFlushMs: opts.usageFlushMs ?? 30_000,
      },
    );
    store.sub = nats.nc.subscribe('acct.*.*', {
      callback: (err, msg) => {
        if (!err) store.onAccountEvent(msg.data);
      },
    });
    store.offReconnect = nats.onReconnect(() => void store.recheck());
    store.timer = setInterval(() => void store.flushUsage(), store.opts.usageFlushMs);
    store.timer.unref();
    return store;
  }

  hash(key: string): string {
    return this.secrets.keyHash(key);
  }

  /** The record for a presented key (active or revoked), or null when unknown. */
  async lookup(key: string): Promise<KeyRecord | null> {
    const hash = this.hash(key);
    const hit = this.cache.get(hash);
    if (hit && hit.until > Date.now()) return hit.record;
    const record = await this.keys.get(hash);
    // Constant-time check of what came back against what was presented (defence in depth).
    const verified = record && this.secrets.sameHash(record.key_hash, hash) ? record : null;
    this.cache.set(hash, {
      record: verified,
      until: Date.now() + (verified ? this.opts.cacheTtlMs : this.opts.unknownTtlMs),
    });
    return verified;
  }

  /** Aborts when the key is revoked; shared by every stream holding the key in this process. */
  revocationSignal(hash: string): AbortSignal {
    let c = this.holders.get(hash);
    if (!c) {
      c = new AbortController();
      this.holders.set(hash, c);
    }
    return c.signal;
  }

  touch(keyId: string): void {
    this.usage.set(keyId, Date.now());
  }

  async stop(): Promise<void> {
    this.sub?.unsubscribe();
    this.offReconnect();
    if (this.timer) clearInterval(this.timer);
    await this.flushUsage();
  }

  private onAccountEvent(data: Uint8Array): void {
    let ev: AccountEvent;
    try {
      ev = decode<AccountEvent>(data);
    } catch {
      return;
    }
    if (ev.type === 'key_revoked') this.revoked(ev.key_hash);
    else if (ev.type === 'plan_changed') {
      for (const [hash, c] of this.cache) if (c.record?.account_id === ev.account_id) this.cache.delete(hash);
    }
  }

  private revoked(hash: string): void {
    const c = this.cache.get(hash);
    if (c?.record)
      this.cache.set(hash, {
        record: { ...c.record, status: 'revoked' },
        until: Date.now() + this.opts.cacheTtlMs,
      });
    else this.cache.delete(hash);
    this.holders.get(hash)?.abort();
    this.holders.delete(hash);
  }

  private async recheck(): Promise<void> {
    this.cache.clear();
    for (const hash of [...this.holders.keys()]) {
      const record = await this.keys.get(hash).catch(() => null);
      if (record?.status === 'revoked') this.revoked(hash);
    }
  }

  private async flushUsage(): Promise<void> {
    const batch = [...this.usage];
    this.usage.clear();
    for (const [keyId, at] of batch) {
      await this.usageBucket
        .put(keyId, at)
        .catch((err) => this.log.warn({ err: String(err) }, 'last-used write failed'));
    }
  }
}
