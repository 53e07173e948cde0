/**
 * One disk-sync connection per API key across every gateway process: a lease per key in the NATS
 * KV bucket `disksync_leases`, `{holder, expires_ms}`, changed only by compare-and-set
 * (`platform/kv-lease.ts`, which states how leases expire and why two writers cannot both win):
 * - acquire: write the key when it holds no lease, or one whose `expires_ms` has passed;
 * - renew (every heartbeat, DISKSYNC_PING_INTERVAL_MS): rewrite it while this holder still holds
 *   it; another holder there means the lease was lost (it expired and another connection took it);
 * - release: delete it while this holder holds it (best effort: a release NATS does not take expires).
 * A crashed holder stops renewing, so its lease is free at most DISKSYNC_LEASE_TTL_MS after its last
 * renewal (the stated time). A live holder that cannot renew (NATS unreachable) ends its connection
 * before that moment (`heldUntil`, a timer in connection.ts), so a key never has two connections,
 * whatever DISKSYNC_NATS_GRACE_MS says (config.ts keeps a renewal every ping to room for two).
 */
import { randomBytes } from 'node:crypto';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { LeaseBucket, REMOVE } from '../../platform/kv-lease.ts';
import type { Nats } from '../../platform/nats.ts';

type LeaseValue = { holder: string; expires_ms: number };

export type RenewOutcome = 'renewed' | 'lost' | 'unreachable';

export type Lease = {
  renew(): Promise<RenewOutcome>;
  release(): void;
  /**
   * Until when (`performance.now()`) the lease is surely this holder's: the start of its last
   * write that took plus SURE_SHARE of the TTL (the rest is kept back for another process's clock
   * and a late tick). Past the TTL another connection of the key may be admitted.
   */
  heldUntil(): number;
};

/** The share of the TTL a holder counts on (see `Lease.heldUntil`). */
const SURE_SHARE = 0.75;

export class KeyLeases {
  private readonly processId = randomBytes(6).toString('hex');
  private next = 0;

  private constructor(
    private readonly bucket: LeaseBucket,
    readonly ttlMs: number,
  ) {}

  static async open(nats: Nats, ttlMs: number, timeoutMs = 2_000): Promise<KeyLeases> {
    const bucket = await LeaseBucket.open(nats, KV_BUCKETS.disksyncLeases, {
      purgeAfterMs: 4 * ttlMs,
      timeoutMs,
    });
    return new KeyLeases(bucket, ttlMs);
  }

  /** The key's lease, or null while another live connection holds it. Throws when NATS fails. */
  async acquire(keyId: string): Promise<Lease | null> {
    const holder = `${this.processId}-${++this.next}`;
    const started = performance.now();
    const r = await this.bucket.change<LeaseValue>(
      keyId,
      (held, now) => (held && held.expires_ms > now ? null : { holder, expires_ms: now + this.ttlMs }),
      { attempts: 5 },
    );
    return r.wrote ? this.lease(keyId, holder, started + this.sureMs) : null;
  }

  private get sureMs(): number {
    return this.ttlMs * SURE_SHARE;
  }

  private lease(keyId: string, holder: string, until: number): Lease {
    let released = false;
    let heldUntil = until;
    // Renewals and the release run one after another, so a release never races a renewal.
    let last: Promise<unknown> = Promise.resolve();
    const renewOnce = async (): Promise<RenewOutcome> => {
      if (released) return 'lost';
      const started = performance.now();
      try {
        const r = await this.bucket.change<LeaseValue>(
          keyId,
          (held, now) => (held?.holder === holder ? { holder, expires_ms: now + this.ttlMs } : null),
          { attempts: 3 },
        );
        if (!r.wrote) return 'lost';
        heldUntil = started + this.sureMs;
        return 'renewed';
      } catch {
        return 'unreachable';
      }
    };
    return {
      renew: () => {
        const p = last.then(renewOnce);
        last = p;
        return p;
      },
      heldUntil: () => heldUntil,
      release: () => {
        if (released) return;
        released = true;
        last = last
          .then(() =>
            this.bucket.change<LeaseValue>(keyId, (held) => (held?.holder === holder ? REMOVE : null)),
          )
          .catch(() => {});
      },
    };
  }
}
