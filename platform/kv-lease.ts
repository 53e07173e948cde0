/**
 * Leases on NATS KV: the one primitive behind every lease of the platform (disk-sync's one
 * connection per key, the concurrent-stream slots of a key, the producer of a live synthetic
 * session). Each is a JSON record per key, changed only by read → edit → compare-and-set write.
 *
 * How expiry works, stated once for all of them:
 * - nats-server 2.9 has no per-message TTL, so a lease's expiry is a Unix-ms time inside the value,
 *   written by its holder. A holder renews before it passes; a crashed holder stops renewing, so
 *   its lease stops counting at most one TTL after its last renewal (each user states its TTL).
 * - Expiries are the writers' clocks: hosts whose clocks differ by d see a crashed holder's lease
 *   end up to d early or late. Nothing else depends on the clocks agreeing.
 * - The bucket's max age (`purgeAfterMs`, longer than any lease) only purges records nobody wrote
 *   for long; what counts is the expiry in the value.
 * - Two writers can never both win from one read: every write goes through `platform/kv-cas.ts`
 *   (the revision read, and a message id per replaced revision, because the KV's own conditional
 *   writes can both pass from one revision on an R3 bucket of nats-server 2.9). The loser reads
 *   again; after `attempts` lost races `change` says so, and the caller decides.
 * - A deleted record (a KV delete marker) is written again at the marker's revision, so a key
 *   released and taken again never reuses the `@0` message id of a new key. A value that is not
 *   JSON (one an older release wrote in another encoding) counts as no lease and is written over
 *   at its revision, so it never blocks its key until the bucket's max age.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KV, KvEntry } from '@nats-io/kv';
import { type BackoffOptions, fullJitterMs } from './backoff.ts';
import { CasConflictError, type CasWriter, openCasBucket } from './kv-cas.ts';
import type { Nats } from './nats.ts';

/** What an edit returns to delete the record. */
export const REMOVE: unique symbol = Symbol('remove');

/** An edit of the current record (null: none, or expired away by the caller's reading): the next value, REMOVE, or null to write nothing. */
export type LeaseEdit<T> = (current: T | null, now: number) => T | typeof REMOVE | null;

export type LeaseChange<T> =
  /** Written (`value` null when removed). */
  | { wrote: true; value: T | null }
  /** The edit chose to write nothing; `current` is what it saw. */
  | { wrote: false; current: T | null; conflict: false }
  /** Every attempt lost a race; `current` is what the last one saw. */
  | { wrote: false; current: T | null; conflict: true };

export type LeaseChangeOptions = {
  /** Read-edit-write rounds before giving up (each lost round means another writer progressed). */
  attempts?: number;
  /** Wait between lost rounds (full jitter), so that many losers do not come back together. */
  backoff?: BackoffOptions;
};

/** A live record's JSON value; null for none, a delete marker, or a value that is not JSON. */
function recordOf<T>(entry: KvEntry | null): T | null {
  if (entry?.operation !== 'PUT' || entry.length === 0) return null;
  try {
    return entry.json<T>();
  } catch {
    return null;
  }
}

export class LeaseBucket {
  private constructor(
    private readonly kv: KV,
    private readonly cas: CasWriter,
  ) {}

  /** Opens (creating if missing) `bucket`, whose records nobody wrote for `purgeAfterMs` are purged. */
  static async open(
    nats: Nats,
    bucket: string,
    opts: { purgeAfterMs: number; timeoutMs?: number },
  ): Promise<LeaseBucket> {
    const { kv, cas } = await openCasBucket(nats, bucket, {
      ttlMs: opts.purgeAfterMs,
      timeoutMs: opts.timeoutMs ?? 2_000,
    });
    return new LeaseBucket(kv, cas);
  }

  /** The record at `key`, or null. */
  async read<T>(key: string): Promise<T | null> {
    return recordOf<T>(await this.kv.get(key));
  }

  /**
   * Reads the record at `key`, applies `edit`, and writes its result over the revision read; on a
   * lost race, again from a fresh read, up to `attempts` times. Throws what NATS throws otherwise
   * (unreachable, timeout).
   */
  async change<T>(key: string, edit: LeaseEdit<T>, opts: LeaseChangeOptions = {}): Promise<LeaseChange<T>> {
    const attempts = opts.attempts ?? 16;
    let current: T | null = null;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const entry = await this.kv.get(key);
      const now = Date.now();
      current = recordOf<T>(entry);
      const next = edit(current, now);
      if (next === null) return { wrote: false, current, conflict: false };
      try {
        if (next === REMOVE) {
          if (entry?.operation === 'PUT') await this.cas.remove(key, entry.revision);
          return { wrote: true, value: null };
        }
        const bytes = JSON.stringify(next);
        if (entry) await this.cas.update(key, bytes, entry.revision);
        else await this.cas.create(key, bytes);
        return { wrote: true, value: next };
      } catch (err) {
        if (!(err instanceof CasConflictError)) throw err;
      }
      if (opts.backoff && attempt + 1 < attempts) await sleep(fullJitterMs(attempt, opts.backoff));
    }
    return { wrote: false, current, conflict: true };
  }
}
