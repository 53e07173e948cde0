/**
 * Per-key rate limits that hold across processes: the authoritative state (token buckets, and the
 * per-minute window where a tier has one) lives in a shared compare-and-swap store; each process
 * takes small batches of tokens ("leases") from it and admits locally from its batch for at most
 * `leaseMs` (with a window, every batch is one token: each admission is its own swap). Rules and
 * bounds: README.md.
 */
import { randomBytes } from 'node:crypto';
import { refill, TIERS, type Tier } from '../../../contracts/limits.ts';
import {
  admittedDecision,
  type LimitView,
  type RateDecision,
  rejectedDecision,
  UNLIMITED,
  unavailableDecision,
} from './decision.ts';
import { LeaseConflictError, type LeaseStore } from './lease-store.ts';
import {
  closedState,
  freshState,
  type LeaseResult,
  type Limits,
  limitsOf,
  maxLeaseSize,
  type SharedState,
  takeLease,
} from './shared-bucket.ts';
import { decodeState, encodeState } from './state-codec.ts';

export type RateLimiter = {
  /** Admits one request of `keyId` at its tier, or says why not. Quant resolves at once without I/O. */
  check(keyId: string, tier: Tier): Promise<RateDecision>;
  /**
   * Takes up to `n` tokens of `keyId` at once from what this process already holds (its unspent
   * batch), with no I/O and no wait: how many it took and the bucket's state after them; null
   * when it holds none (then `check` asks the store). A batch's further calls are charged so.
   */
  take(keyId: string, tier: Tier, n: number): { taken: number; decision: RateDecision } | null;
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

/** Limits of each tier, computed once (`check` is on every request's path). */
const TIER_LIMITS_OF = Object.fromEntries(TIERS.map((t) => [t, limitsOf(t)])) as Record<Tier, Limits>;

type Seen = { state: SharedState; revision: number };
type Outcome = 'granted' | 'empty' | 'unavailable';

/** What one process knows and holds for one key at one tier. */
type KeyState = {
  readonly storeKey: string;
  readonly limits: Limits;
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

  const keyState = (keyId: string, tier: Tier, limits: Limits): KeyState => {
    let k = keys[tier].get(keyId);
    if (!k) {
      k = {
        storeKey: stateKey(keyId, tier),
        limits,
        maxLease: maxLeaseSize(limits, opts.leaseFraction),
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
    // A value not written for these limits is overwritten, starting closed (empty buckets, full
    // window) rather than open: a format this process cannot read never makes it admit more.
    const state = decodeState(stored.value, k.limits) ?? closedState(k.limits, nowMs);
    return { state, revision: stored.revision };
  };

  /** One batch from the store: compare-and-swap, re-reading on conflict. */
  const takeBatch = async (k: KeyState, req: ReturnType<typeof request>): Promise<Outcome> => {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      if (k.seen === undefined) k.seen = await read(k, now());
      const seen = k.seen;
      const t = now();
      const r: LeaseResult = takeLease(seen?.state ?? freshState(k.limits, t), k.limits, t, req);
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

  /** Whole tokens of this process's batch still spendable at `t` (0 once its lease has ended). */
  const held = (k: KeyState, t: number): number => (t < k.leaseEndsMs ? Math.floor(k.leased) : 0);

  /**
   * Best estimate now: each bucket at the shared level last seen, refilled, plus our unspent batch;
   * the window as last seen (it holds our own admission once our swap has won).
   */
  const view = (k: KeyState, nowMs: number): LimitView => {
    const state = k.seen?.state;
    const tokens = k.limits.buckets.map((s, i) => {
      const shared = state ? refill(state.tokens[i] ?? 0, state.lastMs, nowMs, s.rate, s.burst) : s.burst;
      return shared + k.leased;
    });
    return { tokens, admissions: state?.admissions ?? [], nowMs };
  };

  async function check(keyId: string, tier: Tier): Promise<RateDecision> {
    const limits = TIER_LIMITS_OF[tier];
    if (!limits) throw new TypeError(`unknown tier ${String(tier)}`);
    if (limits.buckets.length === 0 && !limits.window) return UNLIMITED;
    const k = keyState(keyId, tier, limits);
    k.demand++;
    k.active++;
    try {
      return await decide(k, limits);
    } finally {
      k.active--;
    }
  }

  async function decide(k: KeyState, limits: Limits): Promise<RateDecision> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const t = now();
      k.lastUsedMs = t;
      if (held(k, t) >= 1) {
        k.leased--;
        return admittedDecision(limits, view(k, t));
      }
      if (!store.reachable()) return unavailableDecision(limits);
      if (k.seen !== undefined && !k.inflight) {
        // What we saw last can only hold more room than the store (others only take tokens and
        // add admissions to the window), so a refusal computed from it needs no round trip.
        const r = takeLease(k.seen?.state ?? freshState(limits, t), limits, t, request(k));
        if (r.granted === 0) {
          const seen: LimitView = { tokens: r.state.tokens, admissions: r.state.admissions, nowMs: t };
          return rejectedDecision(limits, seen, r.retryAtMs - t);
        }
      }
      if (k.inflight) {
        // Someone else's batch: take from it on the next round, if it lasts until then.
        if ((await k.inflight) === 'unavailable') return unavailableDecision(limits);
        continue;
      }
      const outcome = await acquire(k);
      if (outcome === 'unavailable') return unavailableDecision(limits);
      // The first token of a batch is the asking check's own: the grant ledger counts it as spent.
      if (outcome === 'granted') return admittedDecision(limits, view(k, now()));
    }
    return rejectedDecision(limits, view(k, now()), 1_000);
  }

  function take(keyId: string, tier: Tier, n: number): { taken: number; decision: RateDecision } | null {
    const limits = TIER_LIMITS_OF[tier];
    if (!limits) throw new TypeError(`unknown tier ${String(tier)}`);
    if (limits.buckets.length === 0 && !limits.window) return { taken: n, decision: UNLIMITED };
    const k = keys[tier].get(keyId);
    const t = now();
    const taken = k ? Math.min(n, held(k, t)) : 0;
    if (!k || taken === 0) return null;
    k.leased -= taken;
    k.demand += taken;
    k.lastUsedMs = t;
    return { taken, decision: admittedDecision(limits, view(k, t)) };
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
    take,
    async close() {
      clearInterval(sweeper);
      for (const byKey of Object.values(keys)) {
        await Promise.all([...byKey.values()].map((k) => k.inflight));
        byKey.clear();
      }
    },
  };
}
