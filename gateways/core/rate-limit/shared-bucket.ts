/**
 * The authoritative state of one key's rate limits, shared by every gateway process, and the lease
 * arithmetic on it: token buckets (spec formula) and, for tiers that have one, the exact per-minute
 * sliding window. Pure: no I/O, no clock (callers pass the time in ms). Rules: README.md.
 */
import {
  type BucketSpec,
  refill,
  type Tier,
  tierBuckets,
  tierWindow,
  type WindowSpec,
} from '../../../contracts/limits.ts';

/** What a request of one tier must pass: every bucket, and the window when there is one. */
export type Limits = {
  readonly buckets: readonly BucketSpec[];
  readonly window: WindowSpec | null;
};

/** The limits of a tier, from the contract (`tierBuckets`, `tierWindow`). Quant: none at all. */
export function limitsOf(tier: Tier): Limits {
  return { buckets: tierBuckets(tier), window: tierWindow(tier) };
}

/** Tokens a holder took in one batch and may still spend until `expiresMs`. */
export type Grant = {
  /** Tokens of the batch not spent at once (the first one is spent by the request that asked). */
  readonly tokens: number;
  /** Wall-clock ms after which the holder no longer spends from the batch. */
  readonly expiresMs: number;
};

export type SharedState = {
  /** Tokens of each bucket, in `Limits.buckets` order, as of `lastMs`. */
  readonly tokens: readonly number[];
  /** Wall-clock ms of the last change; never moves backwards. */
  readonly lastMs: number;
  /** Outstanding batches by holder id (one per holder at most). */
  readonly grants: Readonly<Record<string, Grant>>;
  /**
   * With a window: the times (ms) of the admissions still in it as of `lastMs`, oldest first, at most
   * `window.limit` of them. Empty without a window.
   */
  readonly admissions: readonly number[];
};

/** What a holder asks for: up to `want` tokens, but nothing unless at least `minGrant` are there. */
export type LeaseRequest = {
  readonly holder: string;
  readonly want: number;
  readonly minGrant: number;
  /** How long the holder may spend the batch, ms. */
  readonly leaseMs: number;
};

export type LeaseResult = {
  /** Tokens taken (0: refused). The caller spends one of them at once. */
  readonly granted: number;
  /** The state to write when `granted > 0`; when refused, the state as of now (nothing to write). */
  readonly state: SharedState;
  /** When refused, the earliest ms at which the request could be granted; otherwise the time passed. */
  readonly retryAtMs: number;
};

/** Slack for float rounding, the same as the reference `tryTake` uses. */
export const TOKEN_EPSILON = 1e-9;

/** Every bucket full, the window empty: a new key (or one expired from the store) may spend its burst. */
export function freshState(limits: Limits, nowMs: number): SharedState {
  return { tokens: limits.buckets.map((s) => s.burst), lastMs: nowMs, grants: {}, admissions: [] };
}

/**
 * Nothing to spend: every bucket empty, the window full as of `nowMs`. What a process assumes of a
 * stored value it cannot read (another format, say during an upgrade): it then admits less, never more.
 */
export function closedState(limits: Limits, nowMs: number): SharedState {
  const admissions = limits.window ? Array.from({ length: limits.window.limit }, () => nowMs) : [];
  return { tokens: limits.buckets.map(() => 0), lastMs: nowMs, grants: {}, admissions };
}

/** Whole tokens every bucket can give at once. */
export function wholeTokens(tokens: readonly number[]): number {
  let least = Infinity;
  for (const t of tokens) least = Math.min(least, t);
  return Math.floor(least + TOKEN_EPSILON);
}

/**
 * The admissions of `times` (sorted) still in the window at `atMs`: those at or after
 * atMs − windowMs, the last `limit` of them at most (older ones can no longer decide anything).
 */
export function inWindow(times: readonly number[], window: WindowSpec, atMs: number): number[] {
  const from = atMs - window.windowMs;
  let i = Math.max(0, times.length - window.limit);
  while (i < times.length && (times[i] ?? Infinity) < from) i++;
  return times.slice(i);
}

/** The whole ms at which an admission at `t` has left the window: the first one after t + windowMs. */
export function leavesWindowAt(t: number, window: WindowSpec): number {
  return Math.floor(t + window.windowMs) + 1;
}

/** Earliest whole ms ≥ atMs at which the window has room for `count` more (`times` as of atMs). */
function windowReadyAt(times: readonly number[], window: WindowSpec, atMs: number, count: number): number {
  if (count > window.limit) return Infinity;
  const mustLeave = times.length + count - window.limit;
  if (mustLeave <= 0) return atMs;
  return Math.max(atMs, leavesWindowAt(times[mustLeave - 1] ?? atMs, window));
}

/** Outstanding grants alive after `fromMs`, soonest expiry first. */
function liveGrants(grants: SharedState['grants'], fromMs: number): Grant[] {
  return Object.values(grants)
    .filter((g) => g.expiresMs > fromMs)
    .sort((a, b) => a.expiresMs - b.expiresMs);
}

/** Refill within a segment where `held` tokens are out on lease: the bucket may not exceed burst − held. */
function refillUnder(tokens: number, fromMs: number, toMs: number, spec: BucketSpec, held: number): number {
  return Math.max(tokens, refill(tokens, fromMs, toMs, spec.rate, spec.burst - held));
}

/**
 * The state as of `nowMs`: spec refill, except that the tokens out on live leases count against the
 * capacity (so the bucket plus what holders may still spend never exceeds the burst); expired grants
 * are dropped, and so are admissions that left the window. Without grants the buckets are exactly
 * `refill` from the contract.
 */
export function advance(state: SharedState, limits: Limits, nowMs: number): SharedState {
  const live = liveGrants(state.grants, state.lastMs);
  const tokens = limits.buckets.map((spec, i) => {
    let t = state.tokens[i] ?? spec.burst;
    let held = live.reduce((sum, g) => sum + g.tokens, 0);
    let from = state.lastMs;
    for (const g of live) {
      if (g.expiresMs >= nowMs) break;
      t = refillUnder(t, from, g.expiresMs, spec, held);
      held -= g.tokens;
      from = g.expiresMs;
    }
    return refillUnder(t, from, nowMs, spec, held);
  });
  const lastMs = Math.max(state.lastMs, nowMs);
  const grants: Record<string, Grant> = {};
  for (const [holder, g] of Object.entries(state.grants)) if (g.expiresMs > lastMs) grants[holder] = g;
  const admissions = limits.window ? inWindow(state.admissions, limits.window, lastMs) : [];
  return { tokens, lastMs, grants, admissions };
}

/** Earliest ms at which one bucket holds `count` tokens, walking the lease-expiry segments. */
function bucketReadyAt(
  state: SharedState,
  live: readonly Grant[],
  spec: BucketSpec,
  i: number,
  count: number,
) {
  let t = state.tokens[i] ?? spec.burst;
  let held = live.reduce((sum, g) => sum + g.tokens, 0);
  let from = state.lastMs;
  for (let k = 0; k <= live.length; k++) {
    const until = live[k]?.expiresMs ?? Infinity;
    if (t + TOKEN_EPSILON >= count) return from;
    if (spec.burst - held + TOKEN_EPSILON >= count && spec.rate > 0) {
      const at = from + ((count - t) / spec.rate) * 1000;
      if (at <= until) return at;
    }
    t = refillUnder(t, from, until, spec, held);
    held -= live[k]?.tokens ?? 0;
    from = until;
  }
  return Infinity;
}

/**
 * A whole ms ≥ `state.lastMs` at which every bucket holds `count` tokens and the window has room for
 * `count` more (state already advanced). For the buckets, the earliest such instant rounded up, plus
 * at most 1 ms, because epoch-ms floats carry ~0.2 µs of rounding that must not land the answer a
 * hair before the token; for the window, the first whole ms after the admission that must leave it.
 */
export function timeWhenAvailable(state: SharedState, limits: Limits, count: number): number {
  const live = liveGrants(state.grants, state.lastMs);
  let when = state.lastMs;
  limits.buckets.forEach((spec, i) => {
    when = Math.max(when, bucketReadyAt(state, live, spec, i, count));
  });
  const buckets = when === state.lastMs ? when : Math.ceil(when + 0.001);
  if (!limits.window) return buckets;
  return Math.max(buckets, windowReadyAt(state.admissions, limits.window, state.lastMs, count));
}

/**
 * Takes a batch of tokens for `req.holder` at `nowMs`. The holder's previous batch is over when it
 * asks again (spent, or dropped at expiry), so its grant leaves the ledger. The first token is spent
 * at once by the asking request, so only the rest is recorded as outstanding. With a window the batch
 * is always one token, spent at once and stamped into the window at the state's time: each admission
 * is recorded exactly when it happens.
 */
export function takeLease(state: SharedState, limits: Limits, nowMs: number, req: LeaseRequest): LeaseResult {
  const advanced = advance(state, limits, nowMs);
  const { [req.holder]: _previous, ...grants } = advanced.grants;
  const base: SharedState = { ...advanced, grants };
  const want = limits.window ? 1 : Math.max(1, Math.floor(req.want));
  const need = Math.max(1, Math.min(want, Math.floor(req.minGrant)));
  const room = limits.window ? limits.window.limit - base.admissions.length : Infinity;
  const available = Math.min(wholeTokens(base.tokens), room);
  if (available < need) {
    return { granted: 0, state: base, retryAtMs: timeWhenAvailable(base, limits, need) };
  }
  const granted = Math.min(available, want);
  const tokens = base.tokens.map((t) => Math.max(0, t - granted));
  const outstanding = granted - 1;
  const nextGrants =
    outstanding > 0
      ? { ...grants, [req.holder]: { tokens: outstanding, expiresMs: nowMs + req.leaseMs } }
      : grants;
  const admissions = limits.window ? [...base.admissions, base.lastMs] : base.admissions;
  return {
    granted,
    state: { tokens, lastMs: base.lastMs, grants: nextGrants, admissions },
    retryAtMs: nowMs,
  };
}

/**
 * Largest batch for a tier: about 2.5 % of its slowest refill rate per second, at least 1, at most
 * the smallest burst; always 1 with a window (each admission is stamped in it). Basic gets 1 (every
 * admission is one compare-and-swap, exact); Pro gets 50.
 */
export function maxLeaseSize(limits: Limits, fraction = 0.025): number {
  if (limits.window) return 1;
  let rate = Infinity;
  let burst = Infinity;
  for (const s of limits.buckets) {
    rate = Math.min(rate, s.rate);
    burst = Math.min(burst, s.burst);
  }
  return Math.max(1, Math.min(Math.floor(burst), Math.floor(rate * fraction)));
}
