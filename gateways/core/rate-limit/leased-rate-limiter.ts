/**
 * Per-key token buckets that hold across processes: the authoritative state lives in a shared
 * compare-and-swap store; each process takes small batches of tokens ("leases") from it and admits
 * locally from its batch for at most `leaseMs`. Rules and bounds: README.md.
 */
import { randomBytes } from 'node:crypto';
import { type BucketSpec, refill, TIERS, type Tier, tierBuckets } from '../../../contracts/limits.ts';
import {
  admittedDecision,
  type RateDecision,
  rejectedDecision,
  UNLIMITED,
  unavailableDecision,
} from './decision.ts';
import { LeaseConflictError, type LeaseStore } from './lease-store.ts';
import { freshState, type LeaseResult, maxLeaseSize, type SharedState, takeLease } from './shared-bucket.ts';
import { decodeState, encodeState } from './state-codec.ts';

export type RateLimiter = {
  /** Takes one token for `keyId` at its tier, or says why not. Quant resolves at once without I/O. */
  check(keyId: string, tier: Tier): Promise<RateDecision>;
  /** Stops background work; the NATS connection stays open (the caller owns it). */
  close(): Promise<void>;
};

export type LeasedRateLimiterOptions = {
  /** How long a batch of tokens may be spent before it is dropped, ms (default 250). */
  leaseMs?: number;
  /** Wall clock in ms, shared meaning across processes (default `Date.now`). */
  now?: () => number;
  /** This process's id in the shared grant ledger (default random). */
  holderId?: string;
  /** Share of the slowest refill rate per second taken in one batch at most (default 0.025). */
  leaseFraction?: number;
};

export const DEFAULT_LEASE_MS = 250;
/** Compare-and-swap attempts per batch before giving up (then fail closed). */
const MAX_CAS_ATTEMPTS = 16;
/** Times one check may wait for another check's batch and find it spent before it says no. */
const MAX_ROUNDS = 32;
/** Keys unused for this long are forgotten (their state stays in the store). */
const IDLE_FORGET_MS = 60_000;

/** Buckets of each tier, computed once (`check` is on every request's path). */
const TIER_SPECS = Object.fromEntries(TIERS.map((t) => [t, tierBuckets(t)])) as Record<
  Tier,
  readonly BucketSpec[]
>;

type Seen = { state: SharedState; revision: number };
type Outcome = 'granted' | 'empty' | 'unavailable';

/** What one process knows and holds for one key at one tier. */
type KeyState = {
  readonly storeKey: string;
  readonly specs: readonly BucketSpec[];
  readonly maxLease: number;
  /** Tokens of the current batch not yet spent, and when the batch ends. */
  leased: number;
  leaseEndsMs: number;
  /** Checks since the last batch was granted: the next batch is sized on it. */
  demand: number;
  /** Checks of this key in progress (waiting for a batch included). */
  active: number;
  /** Last state read or written; undefined: must read; null: the key does not exist. */
  seen: Seen | null | undefined;
  inflight: Promise<Outcome> | null;
  lastUsedMs: number;
};

/** KV keys allow `[-/_=.A-Za-z0-9]`; key ids are base62 with `_`, anything else is encoded. */
export function stateKey(keyId: string, tier: Tier): string {
  const id = /^[A-Za-z0-9_-]+$/.test(keyId) ? keyId : `b64.${Buffer.from(keyId).toString('base64url')}`;
  return `rl.${id}.${tier}`;
}

export function createLeasedRateLimiter(store: LeaseStore, opts: LeasedRateLimiterOptions = {}): RateLimiter {
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const now = opts.now ?? Date.now;
  const holder = opts.holderId ?? randomBytes(6).toString('base64url');
  const keys = Object.fromEntries(TIERS.map((t) => [t, new Map<string, KeyState>()])) as Record<
    Tier,
    Map<string, KeyState>
  >;

  const keyState = (keyId: string, tier: Tier, specs: readonly BucketSpec[]): KeyState => {
    let k = keys[tier].get(keyId);
    if (!k) {
      k = {
        storeKey: stateKey(keyId, tier),
        specs,
        maxLease: maxLeaseSize(specs, opts.leaseFraction),
        leased: 0,
        leaseEndsMs: 0,
        demand: 0,
        active: 0,
        seen: undefined,
        inflight: null,
        lastUsedMs: 0,
      };
      keys[tier].set(keyId, k);
    }
    return k;
  };

  /**
   * Batch size: twice the demand seen over the last batch (so it grows fast and shrinks when idle),
   * and enough for the checks waiting now.
   */
  const request = (k: KeyState) => {
    const want = Math.min(k.maxLease, Math.max(1, 2 * k.demand, k.active));
    return { holder, want, minGrant: Math.ceil(want / 2), leaseMs };
  };

  const read = async (k: KeyState, nowMs: number): Promise<Seen | null> => {
    const stored = await store.get(k.storeKey);
    if (!stored) return null;
    // A value not written for these buckets is overwritten, starting empty rather than full.
    const state = decodeState(stored.value, k.specs) ?? {
      ...freshState(k.specs, nowMs),
      tokens: k.specs.map(() => 0),
    };
    return { state, revision: stored.revision };
  };

  /** One batch from the store: compare-and-swap, re-reading on conflict. */
  const takeBatch = async (k: KeyState, req: ReturnType<typeof request>): Promise<Outcome> => {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (k.seen === undefined) k.seen = await read(k, now());
      const seen = k.seen;
      const t = now();
      const r: LeaseResult = takeLease(seen?.state ?? freshState(k.specs, t), k.specs, t, req);
      if (r.granted === 0) return 'empty';
      try {
        const value = encodeState(r.state);
        const revision = seen
          ? await store.update(k.storeKey, value, seen.revision)
          : await store.create(k.storeKey, value);
        k.seen = { state: r.state, revision };
        k.leased = r.granted - 1;
        k.leaseEndsMs = t + leaseMs;
        k.demand = 0;
        return 'granted';
      } catch (err) {
        if (!(err instanceof LeaseConflictError)) throw err;
        k.seen = undefined;
      }
    }
    return 'unavailable';
  };

  /** Starts the one batch request of this key in this process; concurrent checks await the same one. */
  const acquire = (k: KeyState): Promise<Outcome> => {
    k.leased = 0;
    const req = request(k);
    const inflight = takeBatch(k, req)
      .catch((): Outcome => {
        k.seen = undefined;
        return 'unavailable';
      })
      .finally(() => {
        k.inflight = null;
      });
    k.inflight = inflight;
    return inflight;
  };

  /** Best estimate of each bucket now: the shared level last seen, refilled, plus our unspent batch. */
  const levels = (k: KeyState, nowMs: number): number[] => {
    const state = k.seen?.state;
    return k.specs.map((s, i) => {
      const shared = state ? refill(state.tokens[i] ?? 0, state.lastMs, nowMs, s.rate, s.burst) : s.burst;
      return shared + k.leased;
    });
  };

  async function check(keyId: string, tier: Tier): Promise<RateDecision> {
    const specs = TIER_SPECS[tier];
    if (!specs) throw new TypeError(`unknown tier ${String(tier)}`);
    if (specs.length === 0) return UNLIMITED;
    const k = keyState(keyId, tier, specs);
    k.demand++;
    k.active++;
    try {
      return await decide(k, specs);
    } finally {
      k.active--;
    }
  }

  async function decide(k: KeyState, specs: readonly BucketSpec[]): Promise<RateDecision> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const t = now();
      k.lastUsedMs = t;
      if (k.leased >= 1 && t < k.leaseEndsMs) {
        k.leased--;
        return admittedDecision(specs, levels(k, t));
      }
      if (!store.reachable()) return unavailableDecision(specs);
      if (k.seen !== undefined && !k.inflight) {
        // What we saw last can only hold more than the store (others only take), so a refusal
        // computed from it needs no round trip.
        const r = takeLease(k.seen?.state ?? freshState(specs, t), specs, t, request(k));
        if (r.granted === 0) return rejectedDecision(specs, r.state.tokens, r.retryAtMs - t);
      }
      if (k.inflight) {
        // Someone else's batch: take from it on the next round, if it lasts until then.
        if ((await k.inflight) === 'unavailable') return unavailableDecision(specs);
        continue;
      }
      const outcome = await acquire(k);
      if (outcome === 'unavailable') return unavailableDecision(specs);
      // The first token of a batch is the asking check's own: the grant ledger counts it as spent.
      if (outcome === 'granted') return admittedDecision(specs, levels(k, now()));
    }
    const t = now();
    return rejectedDecision(specs, levels(k, t), 1_000);
  }

  const sweeper = setInterval(() => {
    const cutoff = now() - IDLE_FORGET_MS;
    for (const byKey of Object.values(keys)) {
      for (const [keyId, k] of byKey) if (!k.inflight && k.lastUsedMs < cutoff) byKey.delete(keyId);
    }
  }, IDLE_FORGET_MS / 2);
  sweeper.unref();

  return {
    check,
    async close() {
      clearInterval(sweeper);
      for (const byKey of Object.values(keys)) {
        await Promise.all([...byKey.values()].map((k) => k.inflight));
        byKey.clear();
      }
    },
  };
}
