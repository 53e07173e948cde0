/**
 * The authoritative state of one key's token buckets, shared by every gateway process, and the
 * lease arithmetic on it. Pure: no I/O, no clock (callers pass the time in ms). Rules: README.md.
 */
import { type BucketSpec, refill } from '../../../contracts/limits.ts';

/** Tokens a holder took in one batch and may still spend until `expiresMs`. */
export type Grant = {
  /** Tokens of the batch not spent at once (the first one is spent by the request that asked). */
  readonly tokens: number;
  /** Wall-clock ms after which the holder no longer spends from the batch. */
  readonly expiresMs: number;
};

export type SharedState = {
  /** Tokens of each bucket, in `tierBuckets` order, as of `lastMs`. */
  readonly tokens: readonly number[];
  /** Wall-clock ms of the last change; never moves backwards. */
  readonly lastMs: number;
  /** Outstanding batches by holder id (one per holder at most). */
  readonly grants: Readonly<Record<string, Grant>>;
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

/** Every bucket full: a new key (or one expired from the store after idling) may spend its burst. */
export function freshState(specs: readonly BucketSpec[], nowMs: number): SharedState {
  return { tokens: specs.map((s) => s.burst), lastMs: nowMs, grants: {} };
}

/** Whole tokens every bucket can give at once. */
export function wholeTokens(tokens: readonly number[]): number {
  let least = Infinity;
  for (const t of tokens) least = Math.min(least, t);
  return Math.floor(least + TOKEN_EPSILON);
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
 * capacity (so the bucket plus what holders may still spend never exceeds the burst), and expired
 * grants are dropped. Without grants this is exactly `refill` from the contract.
 */
export function advance(state: SharedState, specs: readonly BucketSpec[], nowMs: number): SharedState {
  const live = liveGrants(state.grants, state.lastMs);
  const tokens = specs.map((spec, i) => {
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
  return { tokens, lastMs, grants };
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
 * A whole ms ≥ `state.lastMs` at which every bucket holds `count` tokens (state already advanced):
 * the earliest such instant rounded up, plus at most 1 ms, because epoch-ms floats carry ~0.2 µs
 * of rounding that must not land the answer a hair before the token.
 */
export function timeWhenAvailable(state: SharedState, specs: readonly BucketSpec[], count: number): number {
  const live = liveGrants(state.grants, state.lastMs);
  let when = state.lastMs;
  specs.forEach((spec, i) => {
    when = Math.max(when, bucketReadyAt(state, live, spec, i, count));
  });
  return when === state.lastMs ? when : Math.ceil(when + 0.001);
}

/**
 * Takes a batch of tokens for `req.holder` at `nowMs`. The holder's previous batch is over when it
 * asks again (spent, or dropped at expiry), so its grant leaves the ledger. The first token is spent
 * at once by the asking request, so only the rest is recorded as outstanding.
 */
export function takeLease(
  state: SharedState,
  specs: readonly BucketSpec[],
  nowMs: number,
  req: LeaseRequest,
): LeaseResult {
  const advanced = advance(state, specs, nowMs);
  const { [req.holder]: _previous, ...grants } = advanced.grants;
  const base: SharedState = { tokens: advanced.tokens, lastMs: advanced.lastMs, grants };
  const want = Math.max(1, Math.floor(req.want));
  const need = Math.max(1, Math.min(want, Math.floor(req.minGrant)));
  const available = wholeTokens(base.tokens);
  if (available < need) {
    return { granted: 0, state: base, retryAtMs: timeWhenAvailable(base, specs, need) };
  }
  const granted = Math.min(available, want);
  const tokens = base.tokens.map((t) => Math.max(0, t - granted));
  const outstanding = granted - 1;
  const nextGrants =
    outstanding > 0
      ? { ...grants, [req.holder]: { tokens: outstanding, expiresMs: nowMs + req.leaseMs } }
      : grants;
  return { granted, state: { tokens, lastMs: base.lastMs, grants: nextGrants }, retryAtMs: nowMs };
}

/**
 * Largest batch for a tier: about 2.5 % of its slowest refill rate per second, at least 1, at most
 * the smallest burst. Basic gets 1 (every admission is one compare-and-swap, exact); Pro gets 50.
 */
export function maxLeaseSize(specs: readonly BucketSpec[], fraction = 0.025): number {
  let rate = Infinity;
  let burst = Infinity;
  for (const s of specs) {
    rate = Math.min(rate, s.rate);
    burst = Math.min(burst, s.burst);
  }
  return Math.max(1, Math.min(Math.floor(burst), Math.floor(rate * fraction)));
}
