/**
 * Polling filters in NATS KV (bucket `jsonrpc_filters`), so that any replica answers the next poll.
 * One entry per live filter under `<key_id>.<slot>`: what it selects, whose events it may see, and
 * its cursors: the last `MD` sequence a poll has examined and, for a filter with a viewer, the last
 * `OWN` sequence (the viewer's own events are read from `OWN`, by its own sequence). An entry is a
 * few fields and two numbers: bounded whatever the filter has seen. An entry written before own
 * cursors existed has none: its first poll starts own events at `OWN`'s end (ReadAfter decides).
 *
 * Invariants:
 * - A key has at most `cap` live filters across every replica: a filter takes a free slot in
 *   [0, cap) with an atomic create, so two replicas never take the same slot.
 * - A poll returns the events after the cursor and moves the cursor with a compare-and-swap on the
 *   entry's revision. Two polls of one filter at once (two replicas) cannot both win: the loser
 *   reads again from the winner's cursor. So the polls of a filter see every event once: no gap,
 *   no duplicate.
 * - A filter not polled for `ttlMs` is gone: the bucket's max age removes the entry (each poll
 *   rewrites it), and a read of an entry older than that answers "not found" before the server
 *   has removed it. The process that opens the bucket sets its max age to `ttlMs`.
 * Every write (install, cursor move, uninstall) goes through `casWriter`, with a message id per
 * replaced revision: on an R3 bucket of nats-server 2.9 the KV's own create/update can both pass
 * from one revision, so two installs could both take one slot (one filter overwritten, its id
 * later "not found"). A slot freed by an uninstall holds a delete marker; the next install writes
 * over the marker's revision, never the `@0` id of a new key (a duplicate within the window).
 * The filter id is `0x` + the slot (4 hex digits) + 24 random hex digits; a stale id never reaches
 * a newer filter in the same slot.
 * An install reads the key's slots with direct gets (the bucket has `allow_direct`), in order and
 * FILTER_SLOT_READ_CHUNK at a time until one is free (a key with n live filters costs about n + 16
 * gets, not `cap`; only a key at its cap reads all `cap`), never by
 * listing its keys: a listing is a new consumer on the bucket's stream, which after its leader's node
 * died waited for the new leader and consumer and made md_newFilter fail -32009 for 5-17 s (issue
 * 13). A direct get is answered by any replica; one that lags can only make a slot look taken or
 * free, and the compare-and-swap write still decides, so the cap stays exact. A write that finds no
 * leader (the election after that death) is sent again for a while (no-leader-retry.ts).
 */
import { randomBytes } from 'node:crypto';
import type { KV, KvEntry } from '@nats-io/kv';
import { nanos } from '@nats-io/transport-node';
import { ApiError } from '../../contracts/errors.ts';
import { FILTER_ID } from '../../contracts/jsonrpc.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { FILTER_SLOT_READ_CHUNK } from '../../contracts/transport-limits.ts';
import { openBucket } from '../../platform/kv.ts';
import { CasConflictError, type CasWriter, casWriter } from '../../platform/kv-cas.ts';
import { decode, encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { retryingWithoutLeader } from './no-leader-retry.ts';

/** A polling filter as stored. Lists are null for "any"; `viewer` is the account whose own events it sees. */
export type StoredFilter = {
  id: string;
  coins: string[] | null;
  event_types: string[] | null;
  sources: string[] | null;
  viewer: string | null;
  /** Last `MD` sequence examined: the next poll returns platform events after it. */
  cursor: number;
  /**
   * With a viewer: the last `OWN` sequence examined (the viewer's own events after it come next).
   * Absent without a viewer, and in entries written before own events left `MD`.
   */
  own_cursor?: number;
  /** Unix ms of the last poll (or of the install). */
  polled_at_ms: number;
};

/** Reads the events after a filter's cursors; `reached` (and `ownReached`) are its next cursors. */
export type ReadAfter<E> = (
  f: StoredFilter,
) => Promise<{ events: E[]; reached: number; ownReached?: number | undefined }>;

const MAX_POLL_ATTEMPTS = 8;
const WRITE_TIMEOUT_MS = 5_000;
/** How long a write waits for the bucket's stream to elect a leader (under the 10 s call deadline). */
const ELECTION_WAIT_MS = 8_000;
const slotOf = (id: string): number => Number.parseInt(id.slice(2, 6), 16);

export class FilterStore {
  private constructor(
    private readonly kv: KV,
    private readonly cas: CasWriter,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /** Opens (or creates) the bucket; a bucket made with another TTL gets this one as its max age. */
  static async open(nats: Nats, ttlMs: number, now: () => number = Date.now): Promise<FilterStore> {
    let bucket = await openBucket(nats, KV_BUCKETS.jsonrpcFilters, { ttlMs, anyReplica: true });
    const status = await bucket.raw.status();
    const { config } = status.streamInfo;
    // A bucket made before direct gets (or with another TTL) is updated, then opened again so that
    // its reads are direct gets.
    if (status.ttl !== ttlMs || !config.allow_direct) {
      await nats.jsm.streams.update(config.name, { ...config, max_age: nanos(ttlMs), allow_direct: true });
      bucket = await openBucket(nats, KV_BUCKETS.jsonrpcFilters, { ttlMs, anyReplica: true });
    }
    const cas = retryingWithoutLeader(
      casWriter(nats.js, KV_BUCKETS.jsonrpcFilters, WRITE_TIMEOUT_MS),
      ELECTION_WAIT_MS,
    );
    return new FilterStore(bucket.raw, cas, ttlMs, now);
  }

  /** Installs a filter in a free slot of `keyId`; -32005 when all `cap` slots are live. */
  async install(
    keyId: string,
    cap: number,
    filter: Omit<StoredFilter, 'id' | 'polled_at_ms'>,
  ): Promise<string> {
    let live = 0;
    for (let from = 0; from < cap; from += FILTER_SLOT_READ_CHUNK) {
      const entries = await this.slotEntries(keyId, from, Math.min(cap, from + FILTER_SLOT_READ_CHUNK));
      for (const [i, entry] of entries.entries()) {
        const slot = from + i;
        if (entry?.operation === 'PUT') {
          live++;
          continue;
        }
        const id = `0x${slot.toString(16).padStart(4, '0')}${randomBytes(12).toString('hex')}`;
        const value = encode({ ...filter, id, polled_at_ms: this.now() });
        if (await this.take(`${keyId}.${slot}`, value, entry)) return id;
        // Another replica took this slot meanwhile: try the next one.
        live++;
      }
    }
    throw new ApiError(
      'subscription_limit',
      `this key already has ${live} live filters (the cap of its tier is ${cap}); uninstall one or let it expire`,
      { limit: cap },
    );
  }

  /** The events after the filter's cursors, moving the cursors past them (see the invariants). */
  async poll<E>(keyId: string, id: string, read: ReadAfter<E>): Promise<E[]> {
    for (let attempt = 0; attempt < MAX_POLL_ATTEMPTS; attempt++) {
      const { filter, revision } = await this.get(keyId, id);
      const { events, reached, ownReached } = await read(filter);
      const next: StoredFilter = {
        ...filter,
        cursor: Math.max(filter.cursor, reached),
        polled_at_ms: this.now(),
      };
      if (ownReached !== undefined) next.own_cursor = Math.max(filter.own_cursor ?? 0, ownReached);
      try {
        await this.cas.update(this.keyOf(keyId, id), encode(next), revision);
        return events;
      } catch (err) {
        if (!(err instanceof CasConflictError)) throw err;
      }
    }
    throw new ApiError('conflict', `filter ${id} is being polled elsewhere at the same time; poll again`);
  }

  /** Removes the filter; false when there was none (unknown or expired), as `eth_uninstallFilter` answers. */
  async uninstall(keyId: string, id: string): Promise<boolean> {
    try {
      const { revision } = await this.get(keyId, id);
      await this.cas.remove(this.keyOf(keyId, id), revision);
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') return false;
      if (err instanceof CasConflictError) return false;
      throw err;
    }
  }

  /** The entries of slots [from, to) (null: never written; a delete marker: free), one direct get each, at once. */
  private slotEntries(keyId: string, from: number, to: number): Promise<(KvEntry | null)[]> {
    return Promise.all(Array.from({ length: to - from }, (_, i) => this.kv.get(`${keyId}.${from + i}`)));
  }

  /**
   * Writes a free slot as read: a new key, or over the delete marker an uninstall left (at its
   * revision); false when another writer got there first.
   */
  private async take(key: string, value: Uint8Array, read: KvEntry | null): Promise<boolean> {
    try {
      if (read) await this.cas.update(key, value, read.revision);
      else await this.cas.create(key, value);
      return true;
    } catch (err) {
      if (err instanceof CasConflictError) return false;
      throw err;
    }
  }

  private keyOf(keyId: string, id: string): string {
    return `${keyId}.${slotOf(id)}`;
  }

  private async get(keyId: string, id: string): Promise<{ filter: StoredFilter; revision: number }> {
    const notFound = () =>
      new ApiError('not_found', `filter ${id} not found: unknown, uninstalled or expired`);
    if (!FILTER_ID.test(id)) throw notFound();
    const entry = await this.kv.get(this.keyOf(keyId, id));
    if (entry?.operation !== 'PUT' || entry.value.length === 0) throw notFound();
    const filter = decode<StoredFilter>(entry.value);
    if (filter.id !== id || this.now() - filter.polled_at_ms > this.ttlMs) throw notFound();
    return { filter, revision: entry.revision };
  }
}
