/**
 * The leased token bucket against the spec's formula (a plain reference model), over seeded random
 * request sequences: the same decisions as the reference for one process with one-token leases, and
 * never more than the reference allows with many processes holding batches.
 */
import { describe, expect, it } from 'vitest';
import { type BucketSpec, type Tier, tierBuckets } from '../../contracts/limits.ts';
import type { RateDecision } from '../../gateways/core/rate-limit/decision.ts';
import { createLeasedRateLimiter, stateKey } from '../../gateways/core/rate-limit/leased-rate-limiter.ts';
import { createMemoryLeaseStore } from '../../gateways/core/rate-limit/memory-lease-store.ts';
import {
  advance,
  freshState,
  maxLeaseSize,
  type SharedState,
  takeLease,
  timeWhenAvailable,
} from '../../gateways/core/rate-limit/shared-bucket.ts';
import { decodeState, encodeState } from '../../gateways/core/rate-limit/state-codec.ts';
import { lowestLevel, referenceLimiter, seededRandom } from '../support/rate-limit-reference.ts';

const SEEDS = Array.from({ length: 25 }, (_, i) => 1_000 + i * 7_919);

/** Gaps between requests: mostly bursts, sometimes pauses long enough to refill a minute bucket. */
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

function randomSpecs(rand: () => number): BucketSpec[] {
  const fast = { rate: 1 + Math.floor(rand() * 50), burst: 1 + Math.floor(rand() * 40) };
  return rand() < 0.5
    ? [fast]
    : [fast, { rate: fast.rate / (2 + rand() * 10), burst: fast.burst * (1 + Math.floor(rand() * 5)) }];
}

type Event = { t: number; holder: number; n: number };

/** Several limiters (processes) on one store and one simulated clock; returns every admission time. */
async function simulate(tier: Tier, holders: number, events: Event[], leaseFraction?: number) {
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
  let i = 0;
  while (i < events.length) {
    // Events at the same instant run concurrently, within and across processes.
    const t = events[i]?.t ?? 0;
    clock = t;
    const batch: Promise<RateDecision>[] = [];
    for (; i < events.length && events[i]?.t === t; i++) {
      const ev = events[i] as Event;
      const limiter = limiters[ev.holder];
      for (let k = 0; limiter && k < ev.n; k++) batch.push(limiter.check('key_Sim42', tier));
    }
    for (const d of await Promise.all(batch)) if (d.admitted) admitted.push(t);
  }
  await Promise.all(limiters.map((l) => l.close()));
  return { admitted, store };
}

function randomEvents(rand: () => number, holders: number, count: number, maxConcurrent: number): Event[] {
  return requestTimes(rand, count).map((t) => ({
    t,
    holder: Math.floor(rand() * holders),
    n: 1 + Math.floor(rand() * maxConcurrent),
  }));
}

describe('shared bucket without leases is the spec bucket', () => {
  it('takes one token exactly when the reference admits (random specs and request times)', () => {
    for (const seed of SEEDS) {
      const rand = seededRandom(seed);
      const specs = randomSpecs(rand);
      const reference = referenceLimiter(specs);
      const times = requestTimes(rand, 3_000);
      let state: SharedState | null = null;
      for (const t of times) {
        const base: SharedState = state ?? freshState(specs, t);
        const r = takeLease(base, specs, t, { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 });
        expect(r.granted === 1, `seed ${seed} at ${t}`).toBe(reference(t));
        // Like the limiter, a refusal writes nothing.
        state = r.granted ? r.state : base;
      }
    }
  });

  it('says when the next token comes (to the ms): not before, and a request then is admitted', () => {
    for (const seed of SEEDS) {
      const rand = seededRandom(seed);
      const specs = randomSpecs(rand);
      let state = freshState(specs, 0);
      for (const t of requestTimes(rand, 500)) {
        const r = takeLease(state, specs, t, { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 });
        if (r.granted) {
          state = r.state;
          continue;
        }
        expect(r.retryAtMs).toBeGreaterThan(t);
        expect(Number.isInteger(r.retryAtMs)).toBe(true);
        expect(
          takeLease(state, specs, r.retryAtMs - 2, { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 })
            .granted,
        ).toBe(0);
        expect(
          takeLease(state, specs, r.retryAtMs, { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 }).granted,
        ).toBe(1);
      }
    }
  });
});

describe('leases', () => {
  const pro = tierBuckets('pro');

  it('sizes batches at 2.5 % of the slowest rate: 1 for Basic, 50 for Pro', () => {
    expect(maxLeaseSize(tierBuckets('basic'))).toBe(1);
    expect(maxLeaseSize(pro)).toBe(50);
  });

  it('counts tokens out on lease against the capacity until the lease ends', () => {
    const spec = [{ rate: 10, burst: 25 }];
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
    const spec = [{ rate: 10, burst: 25 }];
    const first = takeLease(freshState(spec, 0), spec, 0, {
      holder: 'a',
      want: 5,
      minGrant: 1,
      leaseMs: 250,
    });
    const second = takeLease(first.state, spec, 10, { holder: 'a', want: 1, minGrant: 1, leaseMs: 250 });
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
    expect(decodeState('{"t":[1],"at":0,"g":{}}', pro)).toBeNull();
    expect(decodeState('not json', pro)).toBeNull();
  });

  it('makes store keys valid KV keys', () => {
    expect(stateKey('key_AbC123', 'basic')).toBe('rl.key_AbC123.basic');
    expect(stateKey('a.b*c', 'pro')).toMatch(/^rl\.b64\.[-_A-Za-z0-9]+\.pro$/);
  });
});

describe('limiter over a shared store, simulated processes and clock', () => {
  it('one process on Basic decides exactly as the reference', async () => {
    for (const seed of SEEDS.slice(0, 10)) {
      const rand = seededRandom(seed);
      const events = randomEvents(rand, 1, 1_500, 1).map((e) => ({ ...e, holder: 0 }));
      const reference = referenceLimiter(tierBuckets('basic'));
      const expected = events.filter((e) => reference(e.t)).map((e) => e.t);
      const { admitted } = await simulate('basic', 1, events);
      expect(admitted, `seed ${seed}`).toEqual(expected);
    }
  });

  it('3 processes on Basic (one-token leases) admit exactly what one reference bucket admits', async () => {
    for (const seed of SEEDS.slice(0, 10)) {
      const events = randomEvents(seededRandom(seed), 3, 1_500, 4);
      const reference = referenceLimiter(tierBuckets('basic'));
      const expected = events
        .flatMap((e) => Array.from({ length: e.n }, () => e.t))
        .filter((t) => reference(t));
      const { admitted } = await simulate('basic', 3, events);
      expect(admitted, `seed ${seed}`).toEqual(expected);
    }
  });

  for (const [tier, holders, leaseFraction, atLeast] of [
    ['basic', 5, 5, 0.5],
    ['pro', 1, undefined, 0.95],
    ['pro', 3, undefined, 0.95],
    ['pro', 8, 0.1, 0.75],
  ] as const) {
    const batches = leaseFraction ? ` with batches of ${leaseFraction * 100} % of the rate` : '';
    it(`${holders} process(es) on ${tier}${batches} never admit more than the spec allows, and ≥ ${atLeast * 100} % of it`, async () => {
      const specs = tierBuckets(tier);
      for (const seed of SEEDS.slice(0, tier === 'pro' ? 3 : 10)) {
        const events = randomEvents(
          seededRandom(seed),
          holders,
          tier === 'pro' ? 1_000 : 2_000,
          tier === 'pro' ? 300 : 4,
        );
        const reference = referenceLimiter(specs);
        const allowed = events
          .flatMap((e) => Array.from({ length: e.n }, () => e.t))
          .filter((t) => reference(t));
        const { admitted } = await simulate(tier, holders, events, leaseFraction);
        expect(lowestLevel(specs, admitted), `seed ${seed}`).toBeGreaterThanOrEqual(-1e-6);
        expect(admitted.length, `seed ${seed}`).toBeGreaterThanOrEqual(atLeast * allowed.length);
      }
    });
  }

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
  it('reports the binding bucket, remaining tokens, reset and Retry-After for Basic', async () => {
    let clock = 0;
    const limiter = createLeasedRateLimiter(createMemoryLeaseStore(), { now: () => clock });
    expect(await limiter.check('key_Basic1', 'basic')).toEqual({
      admitted: true,
      limit: 10,
      remaining: 24,
      resetSeconds: 1,
      retryAfterSeconds: 0,
    });
    for (let i = 0; i < 24; i++) await limiter.check('key_Basic1', 'basic');
    expect(await limiter.check('key_Basic1', 'basic')).toMatchObject({
      admitted: false,
      remaining: 0,
      retryAfterSeconds: 1,
    });
    // Spend the minute bucket: 100 at first, then it refills 100 per 60 s.
    for (clock = 0; clock < 20_000; clock += 50) await limiter.check('key_Basic1', 'basic');
    const d = await limiter.check('key_Basic1', 'basic');
    expect(d).toMatchObject({ admitted: false, limit: 100 / 60, remaining: 0 });
    expect(d.resetSeconds).toBeGreaterThan(50);
    expect(d.resetSeconds).toBeLessThanOrEqual(60);
    await limiter.close();
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
