/**
 * The leased rate limiter against the spec written plainly (a reference model: token buckets by the
 * formula, plus the exact per-minute window), over seeded random request sequences: the same
 * decisions as the reference for one process, and for many processes on Basic (one-token leases, each
 * admission stamped in the shared window); never more than the reference allows with processes
 * holding batches (Pro). And the decision fields and headers: whole numbers, by the documented rule.
 */
import { describe, expect, it } from 'vitest';
import { type BucketSpec, type Tier, tierBuckets, type WindowSpec } from '../../contracts/limits.ts';
import { rateLimitHeaders } from '../../gateways/core/guard.ts';
import type { RateDecision } from '../../gateways/core/rate-limit/decision.ts';
import { createLeasedRateLimiter, stateKey } from '../../gateways/core/rate-limit/leased-rate-limiter.ts';
import { createMemoryLeaseStore } from '../../gateways/core/rate-limit/memory-lease-store.ts';
import {
  advance,
  closedState,
  freshState,
  type Limits,
  limitsOf,
  maxLeaseSize,
  type SharedState,
  takeLease,
  timeWhenAvailable,
} from '../../gateways/core/rate-limit/shared-bucket.ts';
import { decodeState, encodeState } from '../../gateways/core/rate-limit/state-codec.ts';
import {
  lowestLevel,
  maxInWindow,
  referenceLimiter,
  referenceLimits,
  seededRandom,
} from '../support/rate-limit-reference.ts';

const SEEDS = Array.from({ length: 25 }, (_, i) => 1_000 + i * 7_919);

/** Gaps between requests: mostly bursts, sometimes pauses long enough to empty a minute window. */
function requestTimes(rand: () => number, count: number): number[] {
  const times: number[] = [];
  let t = 1_700_000_000_000 + Math.floor(rand() * 1_000);
  for (let i = 0; i < count; i++) {
    const r = rand();
    t +=
      r < 0.5
        ? Math.floor(rand() * 5)
        : r < 0.8
          ? Math.floor(rand() * 200)
          : r < 0.97
            ? Math.floor(rand() * 2_000)
            : Math.floor(rand() * 90_000);
    times.push(t);
  }
  return times;
}

/** One or two buckets, and half the time a window short enough to bind often. */
function randomLimits(rand: () => number): Limits {
  const fast = { rate: 1 + Math.floor(rand() * 50), burst: 1 + Math.floor(rand() * 40) };
  const buckets: BucketSpec[] =
    rand() < 0.5
      ? [fast]
      : [fast, { rate: fast.rate / (2 + rand() * 10), burst: fast.burst * (1 + Math.floor(rand() * 5)) }];
  const window: WindowSpec | null =
    rand() < 0.5 ? null : { limit: 1 + Math.floor(rand() * 60), windowMs: 100 + Math.floor(rand() * 10_000) };
  return { buckets, window };
}

const ONE = { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 } as const;

type Event = { t: number; holder: number; n: number };

/** Several limiters (processes) on one store and one simulated clock; returns every admission time. */
/**
 * A JSON-RPC batch of `n` calls, as chargeBatch charges it: the admission, then as many tokens as
 * the process holds at once (`take`), a check when it holds none, until the first refusal.
 * Resolves with how many calls were admitted.
 */
async function chargeLike(limiter: ReturnType<typeof createLeasedRateLimiter>, tier: Tier, n: number) {
  if (!(await limiter.check('key_Sim42', tier)).admitted) return 0;
  let i = 1;
  while (i < n) {
    const held = limiter.take('key_Sim42', tier, n - i);
    if (held && held.taken > 0) {
      i += held.taken;
      continue;
    }
    if (!(await limiter.check('key_Sim42', tier)).admitted) break;
    i++;
  }
  return i;
}

async function simulate(
  tier: Tier,
  holders: number,
  events: Event[],
  leaseFraction?: number,
  batched = false,
) {
  const store = createMemoryLeaseStore();
  let clock = 0;
  const limiters = Array.from({ length: holders }, (_, i) =>
    createLeasedRateLimiter(store, {
      now: () => clock,
      holderId: `h${i}`,
      ...(leaseFraction ? { leaseFraction } : {}),
    }),
  );
  const admitted: number[] = [];
  const decisions: RateDecision[] = [];
  let i = 0;
  while (i < events.length) {
    // Events at the same instant run concurrently, within and across processes.
    const t = events[i]?.t ?? 0;
    clock = t;
    const batch: Promise<RateDecision>[] = [];
    const charged: Promise<number>[] = [];
    for (; i < events.length && events[i]?.t === t; i++) {
      const ev = events[i] as Event;
      const limiter = limiters[ev.holder];
      if (limiter && batched) charged.push(chargeLike(limiter, tier, ev.n));
      else for (let k = 0; limiter && k < ev.n; k++) batch.push(limiter.check('key_Sim42', tier));
    }
    for (const n of await Promise.all(charged)) for (let k = 0; k < n; k++) admitted.push(t);
    for (const d of await Promise.all(batch)) {
      decisions.push(d);
      if (d.admitted) admitted.push(t);
    }
  }
  await Promise.all(limiters.map((l) => l.close()));
  return { admitted, decisions, store };
}

function randomEvents(rand: () => number, holders: number, count: number, maxConcurrent: number): Event[] {
  return requestTimes(rand, count).map((t) => ({
    t,
    holder: Math.floor(rand() * holders),
    n: 1 + Math.floor(rand() * maxConcurrent),
  }));
}

const isWhole = (n: number) => Number.isInteger(n) && n >= 0;

describe('shared state without leases is the spec: buckets by the formula, the exact window', () => {
  it('admits exactly when the reference admits (random buckets, windows and request times)', () => {
    let windowRefusals = 0;
    for (const seed of SEEDS) {
      const rand = seededRandom(seed);
      const limits = randomLimits(rand);
      const reference = referenceLimiter(limits);
      const times = requestTimes(rand, 3_000);
      let state: SharedState | null = null;
      const admitted: number[] = [];
      for (const t of times) {
        const base: SharedState = state ?? freshState(limits, t);
        const r = takeLease(base, limits, t, ONE);
        expect(r.granted === 1, `seed ${seed} at ${t}`).toBe(reference(t));
        if (r.granted) admitted.push(t);
        else if (limits.window && r.state.admissions.length >= limits.window.limit) windowRefusals++;
        // Like the limiter, a refusal writes nothing.
        state = r.granted ? r.state : base;
        if (limits.window) expect(state.admissions.length).toBeLessThanOrEqual(limits.window.limit);
      }
      if (limits.window) {
        expect(maxInWindow(admitted, limits.window.windowMs)).toBeLessThanOrEqual(limits.window.limit);
      }
    }
    // The windows did bind, often.
    expect(windowRefusals).toBeGreaterThan(1_000);
  });

  it('says when the next admission can be (to the ms): not before, and a request then is admitted', () => {
    for (const seed of SEEDS) {
      const rand = seededRandom(seed);
      const limits = randomLimits(rand);
      let state = freshState(limits, 0);
      for (const t of requestTimes(rand, 500)) {
        const r = takeLease(state, limits, t, ONE);
        if (r.granted) {
          state = r.state;
          continue;
        }
        expect(r.retryAtMs).toBeGreaterThan(t);
        expect(Number.isInteger(r.retryAtMs)).toBe(true);
        expect(takeLease(state, limits, r.retryAtMs - 2, ONE).granted).toBe(0);
        expect(takeLease(state, limits, r.retryAtMs, ONE).granted).toBe(1);
      }
    }
  });

  it('counts an admission in the window up to and including windowMs later, and frees it 1 ms after', () => {
    const limits: Limits = {
      buckets: [{ rate: 1_000, burst: 1_000 }],
      window: { limit: 3, windowMs: 1_000 },
    };
    let state = freshState(limits, 0);
    for (const t of [0, 10, 20]) {
      const r = takeLease(state, limits, t, ONE);
      expect(r.granted).toBe(1);
      state = r.state;
    }
    expect(state.admissions).toEqual([0, 10, 20]);
    expect(takeLease(state, limits, 30, ONE)).toMatchObject({ granted: 0, retryAtMs: 1_001 });
    expect(takeLease(state, limits, 1_000, ONE).granted).toBe(0);
    const later = takeLease(state, limits, 1_001, ONE);
    expect(later.granted).toBe(1);
    expect(later.state.admissions).toEqual([10, 20, 1_001]);
    // Asking for more than one at a time changes nothing: a window takes one per swap.
    expect(takeLease(freshState(limits, 0), limits, 0, { ...ONE, want: 5, minGrant: 3 }).granted).toBe(1);
  });
});

describe('leases', () => {
  const pro = limitsOf('pro');
  const bucketOnly = (spec: BucketSpec[]): Limits => ({ buckets: spec, window: null });

  it('has the per-second bucket for Basic and Pro, and the per-minute window only for Basic', () => {
    expect(limitsOf('basic')).toEqual({
      buckets: [{ rate: 10, burst: 25 }],
      window: { limit: 100, windowMs: 60_000 },
    });
    expect(pro).toEqual({ buckets: [{ rate: 2_000, burst: 500 }], window: null });
    expect(limitsOf('quant')).toEqual({ buckets: [], window: null });
  });

  it('sizes batches at 2.5 % of the slowest rate: 1 for Basic (always, with a window), 50 for Pro', () => {
    expect(maxLeaseSize(limitsOf('basic'))).toBe(1);
    expect(maxLeaseSize(limitsOf('basic'), 5)).toBe(1);
    expect(maxLeaseSize(pro)).toBe(50);
  });

  it('counts tokens out on lease against the capacity until the lease ends', () => {
    const spec = bucketOnly([{ rate: 10, burst: 25 }]);
    const taken = takeLease(freshState(spec, 0), spec, 0, {
      holder: 'a',
      want: 20,
      minGrant: 1,
      leaseMs: 250,
    });
    expect(taken.granted).toBe(20);
    expect(taken.state.grants.a).toEqual({ tokens: 19, expiresMs: 250 });
    // Until 250 ms the bucket may not refill past 25 − 19 = 6; then it refills normally.
    expect(advance(taken.state, spec, 200).tokens[0]).toBe(6);
    expect(advance(taken.state, spec, 1_000).tokens[0]).toBeCloseTo(6 + 7.5, 9);
    expect(advance(taken.state, spec, 1_000).grants).toEqual({});
    expect(timeWhenAvailable(advance(taken.state, spec, 0), spec, 10)).toBe(651);
  });

  it("drops the asking holder's previous grant and records only the tokens not spent at once", () => {
    const spec = bucketOnly([{ rate: 10, burst: 25 }]);
    const first = takeLease(freshState(spec, 0), spec, 0, {
      holder: 'a',
      want: 5,
      minGrant: 1,
      leaseMs: 250,
    });
    const second = takeLease(first.state, spec, 10, ONE);
    expect(second.granted).toBe(1);
    expect(second.state.grants).toEqual({});
  });

  it('round-trips through the wire form and refuses values of another shape', () => {
    const taken = takeLease(freshState(pro, 5), pro, 5, {
      holder: 'h1',
      want: 50,
      minGrant: 25,
      leaseMs: 250,
    });
    expect(decodeState(encodeState(taken.state), pro)).toEqual(taken.state);
    expect(decodeState('{"t":[1,2],"at":0,"g":{}}', pro)).toBeNull();
    expect(decodeState('{"t":[1],"at":0,"g":{},"w":[1]}', pro)).toBeNull();
    expect(decodeState('not json', pro)).toBeNull();
  });

  it('keeps the Basic window small on the wire: ages, at most 100 of them', () => {
    const basic = limitsOf('basic');
    let state = freshState(basic, 1_700_000_000_000);
    for (let t = 1_700_000_000_000; t < 1_700_000_200_000; t += 97) {
      const r = takeLease(state, basic, t, ONE);
      if (r.granted) state = r.state;
    }
    expect(state.admissions).toHaveLength(100);
    const wire = encodeState(state);
    expect(decodeState(wire, basic)).toEqual(state);
    expect(wire.length).toBeLessThan(1_000);
    // A value this process cannot read (the old two-bucket form): nothing to spend, for a minute.
    expect(decodeState('{"t":[25,100],"at":0,"g":{}}', basic)).toBeNull();
    const closed = closedState(basic, 0);
    expect(takeLease(closed, basic, 59_999, ONE).granted).toBe(0);
    expect(takeLease(closed, basic, 60_001, ONE).granted).toBe(1);
  });

  it('makes store keys valid KV keys', () => {
    expect(stateKey('key_AbC123', 'basic')).toBe('rl.key_AbC123.basic');
    expect(stateKey('a.b*c', 'pro')).toMatch(/^rl\.b64\.[-_A-Za-z0-9]+\.pro$/);
  });
});

describe('limiter over a shared store, simulated processes and clock', () => {
  const basic = referenceLimits('basic');

  it('one process on Basic decides exactly as the reference', async () => {
    for (const seed of SEEDS.slice(0, 10)) {
      const rand = seededRandom(seed);
      const events = randomEvents(rand, 1, 1_500, 1).map((e) => ({ ...e, holder: 0 }));
      const reference = referenceLimiter(basic);
      const expected = events.filter((e) => reference(e.t)).map((e) => e.t);
      const { admitted } = await simulate('basic', 1, events);
      expect(admitted, `seed ${seed}`).toEqual(expected);
    }
  });

  for (const holders of [3, 6]) {
    it(`${holders} processes on Basic admit exactly what the reference admits: never more than 100 in any 60 s, nor 25 at once`, async () => {
      let windowFilled = 0;
      for (const seed of SEEDS.slice(0, 10)) {
        const events = randomEvents(seededRandom(seed), holders, 2_000, 8);
        const reference = referenceLimiter(basic);
        const expected = events
          .flatMap((e) => Array.from({ length: e.n }, () => e.t))
          .filter((t) => reference(t));
        const { admitted, decisions } = await simulate('basic', holders, events);
        expect(admitted, `seed ${seed}`).toEqual(expected);
        expect(maxInWindow(admitted, 60_000), `seed ${seed}`).toBeLessThanOrEqual(100);
        expect(maxInWindow(admitted, 0), `seed ${seed}`).toBeLessThanOrEqual(25);
        expect(lowestLevel(tierBuckets('basic'), admitted), `seed ${seed}`).toBeGreaterThanOrEqual(-1e-9);
        if (maxInWindow(admitted, 60_000) === 100) windowFilled++;
        for (const d of decisions) {
          expect([d.limit, d.remaining, d.resetSeconds, d.retryAfterSeconds].every(isWhole)).toBe(true);
          expect(d.limit).toBe(100);
        }
      }
      // The sequences do reach the window's limit: it is what refused them.
      expect(windowFilled).toBeGreaterThan(5);
    });
  }

  it('a burst of 42 simultaneous checks over 3 processes admits 25, then 10/s, then nothing past 100', async () => {
    const events: Event[] = [0, 1, 2].map((h) => ({ t: 1_000, holder: h, n: 14 }));
    // Then 3 processes × 2 every 50 ms for 70 s.
    for (let t = 1_050; t < 71_000; t += 50) for (let h = 0; h < 3; h++) events.push({ t, holder: h, n: 2 });
    const { admitted } = await simulate('basic', 3, events);
    expect(admitted.filter((t) => t === 1_000)).toHaveLength(25);
    expect(admitted.filter((t) => t > 1_000 && t <= 2_000)).toHaveLength(10);
    expect(admitted.filter((t) => t < 61_001)).toHaveLength(100);
    expect(admitted[99]).toBe(8_500);
    // At 61,001 ms the burst has left the window: the next 4 instants × 6 requests are all admitted.
    expect(admitted.filter((t) => t > 61_000 && t <= 61_200)).toHaveLength(24);
    expect(maxInWindow(admitted, 60_000)).toBe(100);
  });

  for (const [holders, leaseFraction, atLeast] of [
    [1, undefined, 0.95],
    [3, undefined, 0.95],
    [8, 0.1, 0.75],
  ] as const) {
    const batches = leaseFraction ? ` with batches of ${leaseFraction * 100} % of the rate` : '';
    it(`${holders} process(es) on pro${batches} never admit more than the spec allows, and ≥ ${atLeast * 100} % of it`, async () => {
      const specs = tierBuckets('pro');
      for (const seed of SEEDS.slice(0, 3)) {
        const events = randomEvents(seededRandom(seed), holders, 1_000, 300);
        const reference = referenceLimiter(referenceLimits('pro'));
        const allowed = events
          .flatMap((e) => Array.from({ length: e.n }, () => e.t))
          .filter((t) => reference(t));
        const { admitted } = await simulate('pro', holders, events, leaseFraction);
        expect(lowestLevel(specs, admitted), `seed ${seed}`).toBeGreaterThanOrEqual(-1e-6);
        expect(admitted.length, `seed ${seed}`).toBeGreaterThanOrEqual(atLeast * allowed.length);
      }
    });
  }

  it('3 processes on pro charging batches (tokens taken at once from a held lease) never admit more than the spec allows, and ≥ 95 % of it', async () => {
    const specs = tierBuckets('pro');
    for (const seed of SEEDS.slice(0, 3)) {
      const events = randomEvents(seededRandom(seed), 3, 1_000, 100);
      const reference = referenceLimiter(referenceLimits('pro'));
      // A refused call ends its batch: the reference admits a batch's calls up to its first refusal.
      let allowed = 0;
      for (const e of events) for (let k = 0; k < e.n && reference(e.t); k++) allowed++;
      const { admitted } = await simulate('pro', 3, events, undefined, true);
      expect(lowestLevel(specs, admitted), `seed ${seed}`).toBeGreaterThanOrEqual(-1e-6);
      expect(admitted.length, `seed ${seed}`).toBeGreaterThanOrEqual(0.95 * allowed);
    }
  });

  it('take hands out at most what the process holds, and nothing once its lease has ended', async () => {
    let clock = 0;
    const limiter = createLeasedRateLimiter(createMemoryLeaseStore(), { now: () => clock });
    expect(limiter.take('key_Take1', 'pro', 10)).toBeNull();
    // Demand grows the batches: after a burst of checks the process holds some tokens.
    await Promise.all(Array.from({ length: 20 }, () => limiter.check('key_Take1', 'pro')));
    const held = limiter.take('key_Take1', 'pro', 1_000);
    expect(held?.taken).toBeGreaterThan(0);
    expect(held?.taken).toBeLessThanOrEqual(50);
    expect(held?.decision.admitted).toBe(true);
    expect(limiter.take('key_Take1', 'pro', 1)).toBeNull();
    await limiter.check('key_Take1', 'pro');
    clock += 1_000; // past the lease
    expect(limiter.take('key_Take1', 'pro', 1)).toBeNull();
    expect(limiter.take('key_Take1', 'quant', 7)).toMatchObject({ taken: 7, decision: { admitted: true } });
    await limiter.close();
  });

  it('3 processes saturating Pro get at least 90 % of what the spec allows, in few store writes', async () => {
    const specs = tierBuckets('pro');
    const events: Event[] = [];
    // 3 processes × 10 requests per ms for 3 s: 30,000/s offered against 2,000/s.
    for (let t = 0; t < 3_000; t++) for (let h = 0; h < 3; h++) events.push({ t, holder: h, n: 10 });
    const { admitted, store } = await simulate('pro', 3, events);
    const allowed = 500 + 2_000 * 3;
    expect(lowestLevel(specs, admitted)).toBeGreaterThanOrEqual(-1e-6);
    expect(admitted.length).toBeGreaterThanOrEqual(0.9 * allowed);
    const writes = store.ops.create + store.ops.update - store.ops.conflicts;
    expect(writes).toBeLessThan(admitted.length / 20);
    expect(store.ops.conflicts).toBeLessThan(admitted.length / 10);
  });

  it('concurrent checks of one key in one process share one store round trip', async () => {
    const store = createMemoryLeaseStore();
    const limiter = createLeasedRateLimiter(store, { now: () => 0 });
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.check('key_Herd1', 'pro')));
    expect(decisions.every((d) => d.admitted)).toBe(true);
    expect(store.ops.get).toBe(1);
    expect(store.ops.create + store.ops.update).toBeLessThanOrEqual(4);
    await limiter.close();
  });
});

describe('decisions', () => {
  it('Basic: limit 100 (per minute), the smaller remainder, reset until all clear, Retry-After', async () => {
    let clock = 0;
    const limiter = createLeasedRateLimiter(createMemoryLeaseStore(), { now: () => clock });
    // The bucket binds: 24 left of 25 (the window has 99); all clear when the admission leaves the window.
    expect(await limiter.check('key_Basic1', 'basic')).toEqual({
      admitted: true,
      limit: 100,
      remaining: 24,
      resetSeconds: 61,
      retryAfterSeconds: 0,
    });
    for (let i = 0; i < 24; i++) await limiter.check('key_Basic1', 'basic');
    expect(await limiter.check('key_Basic1', 'basic')).toEqual({
      admitted: false,
      limit: 100,
      remaining: 0,
      resetSeconds: 61,
      retryAfterSeconds: 1,
      // Unrounded (gRPC retry-after-ms): the next token at 10/s, 100 ms on, admitted 1 ms after.
      retryAfterMs: 101,
    });
    // 10/s until the window holds 100 (the 100th at 7.5 s), then nothing until the burst leaves it.
    for (clock = 0; clock <= 20_000; clock += 50) await limiter.check('key_Basic1', 'basic');
    clock = 20_000;
    expect(await limiter.check('key_Basic1', 'basic')).toEqual({
      admitted: false,
      limit: 100,
      remaining: 0,
      // The newest (7,500 ms) leaves at 67,501 ms; the oldest (0 ms) at 60,001 ms.
      resetSeconds: 48,
      retryAfterSeconds: 41,
      retryAfterMs: 40_001,
    });
    clock = 60_000;
    expect(await limiter.check('key_Basic1', 'basic')).toMatchObject({
      admitted: false,
      retryAfterSeconds: 1,
      retryAfterMs: 1,
    });
    clock = 60_001;
    // The 25 of the burst left: the window has 24 after this one, the bucket too.
    expect(await limiter.check('key_Basic1', 'basic')).toEqual({
      admitted: true,
      limit: 100,
      remaining: 24,
      resetSeconds: 61,
      retryAfterSeconds: 0,
    });
    await limiter.close();
  });

  it('Pro: limit 2,000 (per second), whole tokens of its bucket', async () => {
    const limiter = createLeasedRateLimiter(createMemoryLeaseStore(), { now: () => 0 });
    const d = await limiter.check('key_Pro1', 'pro');
    expect(d).toMatchObject({ admitted: true, limit: 2_000, retryAfterSeconds: 0, resetSeconds: 1 });
    expect(d.remaining).toBe(499);
    await limiter.close();
  });

  it('headers are whole numbers, whatever the decision holds', () => {
    expect(
      rateLimitHeaders({
        admitted: false,
        limit: 100 / 60,
        remaining: 2.7,
        resetSeconds: 1.2,
        retryAfterSeconds: 0.3,
      }),
    ).toEqual({
      'x-ratelimit-limit': '1',
      'x-ratelimit-remaining': '2',
      'x-ratelimit-reset': '2',
      'retry-after': '1',
    });
    expect(
      rateLimitHeaders({
        admitted: true,
        limit: 100,
        remaining: -1,
        resetSeconds: NaN,
        retryAfterSeconds: 0,
      }),
    ).toEqual({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '0' });
    expect(
      rateLimitHeaders({
        admitted: true,
        limit: Infinity,
        remaining: Infinity,
        resetSeconds: 0,
        retryAfterSeconds: 0,
      }),
    ).toEqual({});
  });

  it('admits Quant without touching the store, even when it is down', async () => {
    const store = createMemoryLeaseStore();
    store.setDown(true);
    const limiter = createLeasedRateLimiter(store);
    for (let i = 0; i < 1_000; i++) expect((await limiter.check('key_Quant1', 'quant')).admitted).toBe(true);
    expect(store.ops).toEqual({ get: 0, create: 0, update: 0, conflicts: 0 });
    await limiter.close();
  });

  it('fails closed for Basic and Pro when the store is unreachable', async () => {
    const store = createMemoryLeaseStore();
    const limiter = createLeasedRateLimiter(store);
    store.setDown(true);
    for (const tier of ['basic', 'pro'] as const) {
      expect(await limiter.check('key_Down1', tier)).toMatchObject({
        admitted: false,
        unavailable: true,
        retryAfterSeconds: 1,
      });
    }
    await limiter.close();
  });
});
