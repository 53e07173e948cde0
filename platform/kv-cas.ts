/**
 * Compare-and-swap writes to a NATS KV bucket that hold on a clustered (R3) stream of nats-server 2.9.
 *
 * The KV's own `create`/`update` carry only Nats-Expected-Last-Subject-Sequence. A 2.9 stream leader
 * checks it against the messages it has applied, not against those it has proposed and not yet
 * applied: two updates of one key from the same revision that arrive together both pass and are
 * both stored, the second over the first. Seen on the 3-node test cluster with two rate-limit
 * writers, each told "written" from revision 39 (at 40 and 41), so one admission was granted twice
 * and only one recorded. A single server checks under its lock and never lets both through.
 *
 * So every write here also carries Nats-Msg-Id `<key>@<revision it replaces>` (0 for a new key). A
 * stream leader records a message id when it proposes the message, so a second write from the same
 * revision is a duplicate and is not stored: every revision of a key is replaced by one write at
 * most, which is what compare-and-swap means. The ids are unique as long as revisions are: a
 * stream's sequences never repeat, and a key that expired and is created again reuses `@0` only
 * after the stream's duplicate window (2 min, or its max age if shorter) has passed. A create over
 * a delete marker is a conflict (`create` never reuses `@0` for a deleted key): a caller that
 * deletes writes the key again with `update` at the marker's revision (unique, like any other), and
 * deletes with `remove`, which carries the same kind of id.
 */
import { JetStreamApiCodes, JetStreamApiError, type JetStreamClient, jetstream } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import { headers } from '@nats-io/transport-node';
import { createBucket } from './kv.ts';
import { decode, encode } from './msgpack.ts';
import type { Nats } from './nats.ts';

/** Another writer replaced the revision this write was based on: read again and retry. */
export class CasConflictError extends Error {
  constructor(key: string, revision: number) {
    super(`KV key ${key} changed since revision ${revision}`);
    this.name = 'CasConflictError';
  }
}

export type CasWriter = {
  /** Writes a key that does not exist yet; its revision, or `CasConflictError`. */
  create(key: string, value: string | Uint8Array): Promise<number>;
  /** Writes over `revision` when that is still the key's last; its revision, or `CasConflictError`. */
  update(key: string, value: string | Uint8Array, revision: number): Promise<number>;
  /** Deletes the key (a KV delete marker) when `revision` is still its last; the marker's revision, or `CasConflictError`. */
  remove(key: string, revision: number): Promise<number>;
};

const CONFLICT_CODES: readonly number[] = [
  JetStreamApiCodes.StreamWrongLastSequence,
  JetStreamApiCodes.StreamWrongLastSequenceUnknown,
];

export function casWriter(js: JetStreamClient, bucket: string, timeoutMs: number): CasWriter {
  const write = async (key: string, value: string | Uint8Array, revision: number, del = false) => {
    const hdrs = del ? headers() : undefined;
    hdrs?.set('KV-Operation', 'DEL');
    const ack = await js
      .publish(`$KV.${bucket}.${key}`, value, {
        ...(hdrs ? { headers: hdrs } : {}),
        msgID: `${key}@${revision}`,
        expect: { lastSubjectSequence: revision },
        timeout: timeoutMs,
      })
      .catch((err: unknown) => {
        if (err instanceof JetStreamApiError && CONFLICT_CODES.includes(err.code))
          throw new CasConflictError(key, revision);
        throw err;
      });
    // A duplicate: another write from this revision was stored (or is being stored) first.
    if (ack.duplicate) throw new CasConflictError(key, revision);
    return ack.seq;
  };
  return {
    create: (key, value) => write(key, value, 0),
    update: (key, value, revision) => write(key, value, revision),
    remove: (key, revision) => write(key, new Uint8Array(0), revision, true),
  };
}

/**
 * What every compare-and-swap user opens: its history-1 bucket (created if missing, patiently, at
 * the cluster's replicas, entries purged `ttlMs` after their last write) with requests bounded by
 * `timeoutMs`, and a CasWriter on it.
 */
export async function openCasBucket(
  nats: Nats,
  bucket: string,
  opts: { ttlMs: number; timeoutMs: number },
): Promise<{ kv: KV; cas: CasWriter }> {
  const js = jetstream(nats.nc, { timeout: opts.timeoutMs });
  const config = { history: 1, ttl: opts.ttlMs, timeout: opts.timeoutMs, replicas: nats.replicas ?? 1 };
  const kv = await createBucket(new Kvm(js), bucket, config);
  return { kv, cas: casWriter(js, bucket, opts.timeoutMs) };
}

/**
 * Reads the record at `key`, applies `change` and writes the result by compare-and-swap, again
 * from a fresh read after each conflict, at most `attempts` times; then throws `CasConflictError`.
 * `change` may throw to refuse (nothing is written). Resolves with what was written.
 */
export async function casChange<T>(
  kv: KV,
  cas: CasWriter,
  key: string,
  change: (current: T | null) => T,
  attempts = 16,
): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const e = await kv.get(key);
    const live = e?.operation === 'PUT' && e.value.length > 0;
    const next = change(live ? decode<T>(e.value) : null);
    const bytes = encode(next);
    try {
      if (!e) await cas.create(key, bytes);
      else await cas.update(key, bytes, e.revision);
      return next;
    } catch (err) {
      if (!(err instanceof CasConflictError)) throw err;
    }
  }
  throw new CasConflictError(key, -1);
}
