/** KV buckets (read models projected from the streams), created idempotently. Values are MessagePack. */

import { JetStreamApiCodes, JetStreamApiError, jetstream } from '@nats-io/jetstream';
import { type KV, Kvm, type KvOptions } from '@nats-io/kv';
import { KV_BUCKETS, REGION_MIRRORED_BUCKETS } from '../contracts/streams.ts';
import { inTime } from './in-time.ts';
import { decode, encode } from './msgpack.ts';
import type { Nats } from './nats.ts';
import { patiently } from './patient.ts';

export type Bucket<T> = {
  raw: KV;
  get(key: string): Promise<T | null>;
  put(key: string, value: T): Promise<void>;
  delete(key: string): Promise<void>;
  /** Every live key and value (tests, rebuild checks). */
  entries(): Promise<Map<string, T>>;
};

const DAY_MS = 86_400_000;

/** Whether a KV write failed because the key's revision was not the one expected (compare-and-swap lost). */
export const isRevisionConflict = (err: unknown): boolean =>
  err instanceof JetStreamApiError &&
  (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
    err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);

/**
 * Creates a KV bucket, or opens it when it exists, patiently (platform/patient.ts): an R3 bucket
 * created by several processes starting at once, on a cluster still electing its leaders, can take
 * longer than one request's timeout. The last error names the bucket.
 *
 * Reads go to the stream's leader (`allow_direct: false`; on a bucket made earlier with direct gets,
 * this client still asks the leader): a direct get may be answered by a replica that has not yet
 * applied the last write, so on a 3-node cluster a read right after a projection was applied could
 * miss it (an account registered, its projection applied, then `createKey` read no account and
 * answered `session_invalid`: test/fault/cluster-clients under load). Compare-and-set users read
 * the revision they will write over from the same leader.
 */
export const createBucket = (kvm: Kvm, name: string, config: Partial<KvOptions>): Promise<KV> =>
  patiently(`KV bucket ${name}`, () => kvm.create(name, { allow_direct: false, ...config }));

export async function openBucket<T>(
  nats: Nats,
  name: string,
  opts: {
    ttlMs?: number;
    history?: number;
    /** Reads answered by any replica (direct gets): for a reader that must not wait for an election and copes with a lagging answer. */
    anyReplica?: boolean;
  } = {},
): Promise<Bucket<T>> {
  const kv = await createBucket(new Kvm(nats.js), name, {
    history: opts.history ?? 1,
    replicas: nats.replicas ?? 1,
    ...(opts.ttlMs ? { ttl: opts.ttlMs } : {}),
    ...(opts.anyReplica ? { allow_direct: true } : {}),
  });
  const home = REGION_MIRRORED_BUCKETS.includes(name) ? await homeView(nats, name) : null;
  return {
    raw: kv,
    async get(key) {
      const e = await kv.get(key);
      // Not in this region's copy: written at home moments ago (a key just made), or absent.
      if (!e && home) return entryValue(await inTime(home.get(key), HOME_READ_MS));
      return entryValue(e);
    },
    async put(key, value) {
      await kv.put(key, encode(value));
    },
    async delete(key) {
      await kv.delete(key);
    },
    async entries() {
      const out = new Map<string, T>();
      for await (const key of await kv.keys()) {
        const v = await kv.get(key);
        if (v && v.operation === 'PUT' && v.value.length > 0) out.set(key, decode<T>(v.value));
      }
      return out;
    },
  };
}

type KvEntry = Awaited<ReturnType<KV['get']>>;

/** An entry's value; null for none, a delete or a purge. */
const entryValue = <T>(e: KvEntry | null): T | null =>
  e && e.operation === 'PUT' && e.value.length > 0 ? decode<T>(e.value) : null;

/** How long a region's read of a home bucket may take (the link's round trip, with margin), ms. */
const HOME_READ_MS = 2_000;

/** Bucket `name` in another JetStream domain (another region's NATS, across the leaf-node link). */
const domainView = (nats: Nats, domain: string, name: string): Promise<KV> =>
  new Kvm(jetstream(nats.nc, { domain, timeout: HOME_READ_MS })).open(name);

/**
 * In a region other than home, the home region's copy of a mirrored bucket (its JetStream domain,
 * across the leaf-node link), read when this region's mirror has no entry: a key made at home
 * works in the region at once, not once the mirror has it. Null at home.
 */
async function homeView(nats: Nats, name: string): Promise<KV | null> {
  if (!nats.home) return null;
  return domainView(nats, nats.home.domain, name);
}

/**
 * One bucket's entry in the other regions' own copies (their JetStream domains, across the link):
 * each region's answer, null where it has none or does not answer within `HOME_READ_MS`. For what
 * a region keeps for itself and home wants to show (a key's last use in JP, in the console).
 */
export function regionsView<T>(nats: Nats, name: string, domains: readonly string[]) {
  const views = new Map<string, Promise<KV>>();
  const view = (domain: string): Promise<KV> => {
    let v = views.get(domain);
    if (!v) {
      v = domainView(nats, domain, name);
      // A region that did not answer is asked again next time.
      v.catch(() => views.delete(domain));
      views.set(domain, v);
    }
    return v;
  };
  return {
    get: (key: string): Promise<(T | null)[]> =>
      Promise.all(
        domains.map(async (domain) => {
          return entryValue<T>(
            await inTime(
              view(domain).then((kv) => kv.get(key)),
              HOME_READ_MS,
            ),
          );
        }),
      ),
  };
}

/** Bucket names and their retention: sessions and usage expire on their own, keys and accounts never. */
export const BUCKET_OPTIONS = {
  [KV_BUCKETS.keys]: {},
  [KV_BUCKETS.accounts]: {},
  [KV_BUCKETS.accountKeys]: {},
  [KV_BUCKETS.sessions]: { ttlMs: 30 * DAY_MS },
  [KV_BUCKETS.keyUsage]: { ttlMs: 400 * DAY_MS },
} as const;
