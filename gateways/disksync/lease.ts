/**
 * One disk-sync connection per API key across every gateway process: a lease per key in the NATS
 * KV bucket `disksync_leases`, `{holder, expires_ms}`. nats-server 2.9 has no per-message TTL, so
 * the expiry is in the value and every write is conditioned on the revision read:
 * - acquire: create the key, or overwrite a lease whose `expires_ms` has passed, at the revision
 *   read; two processes racing cannot both win (the loser sees a revision conflict and re-reads).
 * - renew (every heartbeat, DISKSYNC_PING_INTERVAL_MS): rewrite at the revision this holder wrote
 *   last; a conflict means the lease was lost (it expired and another connection took it).
 * - release: delete at that revision (best effort: a release NATS does not take expires).
 * A crashed holder stops renewing, so its lease is free at most DISKSYNC_LEASE_TTL_MS after its
 * last renewal (the stated time). Expiries are the writers' clocks: hosts whose clocks differ by
 * d see a crashed holder's lease end up to d early or late.
 * Every write (create, overwrite, renewal, release) goes through `casWriter`, with a message id per
 * replaced revision: on an R3 bucket of nats-server 2.9 the KV's own conditional writes can both
 * pass from one revision. A released key's delete marker is overwritten at its revision, so a key
 * released and taken again never reuses the `@0` id of a new key.
 */
import { randomBytes } from 'node:crypto';
import type { KV } from '@nats-io/kv';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { CasConflictError, type CasWriter, openCasBucket } from '../../platform/kv-cas.ts';
import type { Nats } from '../../platform/nats.ts';

type LeaseValue = { holder: string; expires_ms: number };

export type RenewOutcome = 'renewed' | 'lost' | 'unreachable';

export type Lease = {
  renew(): Promise<RenewOutcome>;
  release(): void;
};

export class KeyLeases {
  private readonly processId = randomBytes(6).toString('hex');
  private next = 0;

  private constructor(
    private readonly kv: KV,
    private readonly cas: CasWriter,
    readonly ttlMs: number,
  ) {}

  static async open(nats: Nats, ttlMs: number, timeoutMs = 2_000): Promise<KeyLeases> {
    // Entries not renewed for long are purged by age (the value's expiry is what counts).
    const { kv, cas } = await openCasBucket(nats, KV_BUCKETS.disksyncLeases, { ttlMs: 4 * ttlMs, timeoutMs });
    return new KeyLeases(kv, cas, ttlMs);
  }

  /** The key's lease, or null while another live connection holds it. Throws when NATS fails. */
  async acquire(keyId: string): Promise<Lease | null> {
    const holder = `${this.processId}-${++this.next}`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const entry = await this.kv.get(keyId);
      const now = Date.now();
      const held = entry?.operation === 'PUT' && entry.length > 0 ? entry.json<LeaseValue>() : null;
      if (held && held.expires_ms > now) return null;
      const value = JSON.stringify({ holder, expires_ms: now + this.ttlMs } satisfies LeaseValue);
      try {
        const revision = entry
          ? await this.cas.update(keyId, value, entry.revision)
          : await this.cas.create(keyId, value);
        return this.lease(keyId, holder, revision);
      } catch (err) {
        if (!(err instanceof CasConflictError)) throw err;
      }
    }
    return null;
  }

  private lease(keyId: string, holder: string, first: number): Lease {
    let revision = first;
    let released = false;
    // Renewals and the release run one after another, so a release never races a renewal.
    let last: Promise<unknown> = Promise.resolve();
    const renewOnce = async (): Promise<RenewOutcome> => {
      if (released) return 'lost';
      const value = JSON.stringify({ holder, expires_ms: Date.now() + this.ttlMs } satisfies LeaseValue);
      try {
        revision = await this.cas.update(keyId, value, revision);
        return 'renewed';
      } catch (err) {
        return err instanceof CasConflictError ? 'lost' : 'unreachable';
      }
    };
    return {
      renew: () => {
        const p = last.then(renewOnce);
        last = p;
        return p;
      },
      release: () => {
        if (released) return;
        released = true;
        last = last.then(() => this.cas.remove(keyId, revision)).catch(() => {});
      },
    };
  }
}
