/**
 * The tier's concurrent-stream cap per key, counted across every gateway process of every
 * transport: one record per key in the KV bucket `stream_leases` holding the leases of its open
 * streams, `{lease id → expiry (Unix ms)}`.
 *
 * Why it holds: a lease is added only by a compare-and-set change (`platform/kv-lease.ts`, which
 * states how leases expire and why two writers cannot both win) of a record in which fewer than
 * `cap` unexpired leases were seen. So no more than `cap` leases are ever live at once.
 * Each process renews its own leases every ttl / 3, so a crashed process's leases stop counting at
 * most STREAM_LEASE_TTL_MS after its last renewal; a release that cannot reach NATS is the same case.
 * NATS unreachable: `acquire` throws (the guard refuses the stream with 503 `overload`: fail
 * closed); streams already open are never cut by it. After an outage longer than `ttlMs`, renewal
 * puts the still-open streams back even past the cap, so they are not cut either.
 * Groups: a lease may name a group (`acquire(id, cap, group)`, its lease id `<process>-<n>~<group>`);
 * the cap then counts distinct groups, and a lease of a group already live is always admitted.
 * `/stream/live` counts an account's distinct (symbol, seed) sessions across processes this way.
 */
import { randomBytes } from 'node:crypto';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { LeaseBucket } from '../../platform/kv-lease.ts';
import type { Nats } from '../../platform/nats.ts';

export type StreamSlot = { admitted: true; release(): void } | { admitted: false; open: number };

export type StreamSlots = {
  /**
   * Takes one of `cap` slots of the key, or says how many are open. With a `group`, the slots are
   * the distinct groups of the key's live leases: one of a group already there is always admitted.
   */
  acquire(keyId: string, cap: number, group?: string): Promise<StreamSlot>;
  /** Slots this process holds for the key. */
  held(keyId: string): number;
  close(): Promise<void>;
};

type Leases = Record<string, number>;

/**
 * Attempts of one compare-and-set before giving up (each loss means another writer progressed).
 * A key opening many streams at once (a client starting 100) has that many writers on one record:
 * each round one wins, so the attempts must outnumber the writers, and a lost race waits a random
 * few milliseconds (full jitter, growing with the attempt to 50 ms) so that the losers do not all
 * come back together.
 */
const MAX_ATTEMPTS = 200;
const BACKOFF = { baseMs: 2, maxMs: 50 };

/** Slots counted in this process only (tests and tools that run a guard without NATS). */
export function createLocalStreamSlots(): StreamSlots {
  /** Key → group → leases (a lease without a group is a group of its own). */
  const open = new Map<string, Map<string, number>>();
  let next = 0;
  return {
    held: (keyId) => [...(open.get(keyId)?.values() ?? [])].reduce((a, b) => a + b, 0),
    async acquire(keyId, cap, group) {
      const groups = open.get(keyId) ?? new Map<string, number>();
      const g = group ?? `#${++next}`;
      if (!groups.has(g) && groups.size >= cap) return { admitted: false, open: groups.size };
      groups.set(g, (groups.get(g) ?? 0) + 1);
      open.set(keyId, groups);
      let released = false;
      return {
        admitted: true,
        release() {
          if (released) return;
          released = true;
          const left = (groups.get(g) ?? 1) - 1;
          if (left > 0) groups.set(g, left);
          else groups.delete(g);
          if (groups.size === 0 && open.get(keyId) === groups) open.delete(keyId);
        },
      };
    },
    async close() {},
  };
}

export async function openKvStreamSlots(
  nats: Nats,
  opts: { ttlMs: number; timeoutMs?: number },
): Promise<StreamSlots> {
  const bucket = await LeaseBucket.open(nats, KV_BUCKETS.streamLeases, {
    purgeAfterMs: 2 * opts.ttlMs,
    timeoutMs: opts.timeoutMs ?? 2_000,
  });
  return new KvStreamSlots(bucket, opts.ttlMs);
}

class KvStreamSlots implements StreamSlots {
  /** Lease ids are `<process id>-<n>`, so renewal can tell this process's own leases. */
  private readonly processId = randomBytes(6).toString('hex');
  private next = 0;
  private readonly mine = new Map<string, Set<string>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly bucket: LeaseBucket,
    private readonly ttlMs: number,
  ) {
    this.timer = setInterval(() => void this.renewAll(), Math.max(1, Math.floor(ttlMs / 3)));
    this.timer.unref();
  }

  held(keyId: string): number {
    return this.mine.get(keyId)?.size ?? 0;
  }

  async acquire(keyId: string, cap: number, group?: string): Promise<StreamSlot> {
    const leaseId = `${this.processId}-${++this.next}${group === undefined ? '' : `~${group}`}`;
    let open = 0;
    const won = await this.change(keyId, (leases, now) => {
      const groups = new Set(Object.keys(leases).map(groupOf));
      open = groups.size;
      if (open >= cap && !(group !== undefined && groups.has(group))) return null;
      leases[leaseId] = now + this.ttlMs;
      return leases;
    });
    if (!won) return { admitted: false, open };
    const set = this.mine.get(keyId) ?? new Set();
    set.add(leaseId);
    this.mine.set(keyId, set);
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        set.delete(leaseId);
        if (set.size === 0 && this.mine.get(keyId) === set) this.mine.delete(keyId);
        // Best effort: a release NATS does not take is a lease that expires within ttlMs.
        this.change(keyId, (leases) => {
          if (!(leaseId in leases)) return null;
          delete leases[leaseId];
          return leases;
        }).catch(() => {});
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }

  /** Renews every lease this process holds and drops its own leases it no longer holds. */
  private async renewAll(): Promise<void> {
    for (const [keyId, set] of this.mine) {
      await this.change(keyId, (leases, now) => {
        for (const id of Object.keys(leases))
          if (id.startsWith(this.processId) && !set.has(id)) delete leases[id];
        for (const id of set) leases[id] = now + this.ttlMs;
        return leases;
      }).catch(() => {});
    }
  }

  /** Lets `edit` change the key's live leases (null: no write), by compare-and-set. Resolves whether it wrote. */
  private async change(
    keyId: string,
    edit: (leases: Leases, now: number) => Leases | null,
  ): Promise<boolean> {
    const r = await this.bucket.change<Leases>(keyId, (cur, now) => edit(live(cur ?? {}, now), now), {
      attempts: MAX_ATTEMPTS,
      backoff: BACKOFF,
    });
    if (!r.wrote && r.conflict) throw new Error(`stream slots of ${keyId}: too many concurrent writers`);
    return r.wrote;
  }
}

/** A lease's group: what follows `~` in its id, else the lease itself. */
function groupOf(leaseId: string): string {
  const at = leaseId.indexOf('~');
  return at < 0 ? leaseId : leaseId.slice(at + 1);
}

function live(leases: Leases, now: number): Leases {
  const out: Leases = {};
  for (const [id, expiry] of Object.entries(leases)) if (expiry > now) out[id] = expiry;
  return out;
}
