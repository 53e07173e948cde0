/**
 * `LeaseStore` on a NATS KV bucket (JetStream). Compare-and-swap is the expected-revision write with
 * a message id per replaced revision (`platform/kv-cas.ts`: the KV's own update lets two writers
 * from one revision both win on a clustered 2.9 stream, which admitted requests twice). A key
 * that stays unwritten longer than the bucket's max age disappears and comes back full, which is
 * correct only if every bucket is full and the window empty by then: the max age is checked
 * against the tiers.
 */
import { TIERS, tierBuckets, tierWindow } from '../../../contracts/limits.ts';
import { CasConflictError, openCasBucket } from '../../../platform/kv-cas.ts';
import type { Nats } from '../../../platform/nats.ts';
import { LeaseConflictError, type LeaseStore } from './lease-store.ts';

export type KvLeaseStoreOptions = {
  bucket: string;
  /** Bucket-level max age, ms (nats-server 2.9 has no per-key TTL). Used only when creating it. */
  maxAgeMs: number;
  /** Timeout of each KV operation, ms: bounds how long a check waits before failing closed. */
  timeoutMs: number;
};

/**
 * How long an unwritten state still matters, ms: the longest time any tier's bucket takes to refill
 * from empty, or its window to empty (Basic's per-minute window: 60 s).
 */
export function longestMemoryMs(): number {
  let longest = 0;
  for (const tier of TIERS) {
    for (const s of tierBuckets(tier)) longest = Math.max(longest, (s.burst / s.rate) * 1000);
    longest = Math.max(longest, tierWindow(tier)?.windowMs ?? 0);
  }
  return longest;
}

export class LeaseBucketMaxAgeError extends Error {
  constructor(bucket: string, maxAgeMs: number) {
    super(
      `KV bucket ${bucket} has max age ${maxAgeMs} ms, shorter than the ${longestMemoryMs()} ms a rate-limit ` +
        'state must be remembered: expired keys would come back full too early',
    );
    this.name = 'LeaseBucketMaxAgeError';
  }
}

/** Opens the KV bucket, creating it (history 1, max age) if missing; safe from many processes at once. */
export async function openKvLeaseStore(nats: Nats, opts: KvLeaseStoreOptions): Promise<LeaseStore> {
  const { kv, cas } = await openCasBucket(nats, opts.bucket, {
    ttlMs: opts.maxAgeMs,
    timeoutMs: opts.timeoutMs,
  });
  const { ttl } = await kv.status();
  if (ttl > 0 && ttl < longestMemoryMs()) throw new LeaseBucketMaxAgeError(opts.bucket, ttl);

  const mapConflict =
    (key: string) =>
    (err: unknown): never => {
      throw err instanceof CasConflictError ? new LeaseConflictError(key) : err;
    };
  return {
    async get(key) {
      const entry = await kv.get(key);
      if (entry?.operation !== 'PUT') return null;
      return { value: entry.string(), revision: entry.revision };
    },
    create: (key, value) => cas.create(key, value).catch(mapConflict(key)),
    update: (key, value, revision) => cas.update(key, value, revision).catch(mapConflict(key)),
    reachable: () => nats.connected(),
  };
}
