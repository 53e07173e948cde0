/**
 * The seeded premium path after period 0: an Ornstein–Uhlenbeck process on the premium
 * P = (mark − index) / index, sampled hourly with its exact transition
 *   X[h] = μ + (X[h−1] − μ)·a + s·Z[h],  a = 2^(−1/half-life), s = σ∞·√(1 − a²),
 * started at the request's premium X[0] = P0. A period of H hours has the mean of its H hourly
 * samples as its premium, as venues average the premium over the interval; period 0 is P0 itself,
 * so the worked examples of VENUES.md §7.1 hold exactly.
 *
 * Z[h] is the counter-based normal of hour h (producers/simulator/prng.ts), so the path depends on
 * (seed, P0) only: every venue sees the same hourly market under one seed, and any hour can be
 * recomputed alone.
 */
import type { PremiumProcess } from '../../contracts/funding.ts';
import { deriveSeed, hashString, RandomStream } from '../../contracts/prng.ts';

/**
 * Parameters: premiums revert to 0 (where clamp venues pay the plain interest I) with a one-day
 * half-life, and wander ±5 bp at one sd — the usual size of BTC perp premiums outside squeezes.
 */
export const PREMIUM_PROCESS: PremiumProcess = Object.freeze({
  kind: 'ornstein_uhlenbeck',
  mean_bps: 0,
  half_life_hours: 24,
  stationary_sd_bps: 5,
  step_hours: 1,
});

// A stream id of our own (the simulator uses 1–12) under a seed keyed by name, so funding draws
// never coincide with the market simulator's draws for the same user seed.
const PREMIUM_STREAM = 64;
const PREMIUM_SEED_KEY = hashString('funding-premium');

const MEAN = PREMIUM_PROCESS.mean_bps / 1e4;
const DECAY = 2 ** (-PREMIUM_PROCESS.step_hours / PREMIUM_PROCESS.half_life_hours);
const STEP_SD = (PREMIUM_PROCESS.stationary_sd_bps / 1e4) * Math.sqrt(1 - DECAY * DECAY);

/** Premium of each of `periods` periods of `hoursPerPeriod` hours; element 0 is `initialPremium`. */
export function periodPremiums(
  seed: number,
  initialPremium: number,
  periods: number,
  hoursPerPeriod: number,
): Float64Array {
  const out = new Float64Array(periods);
  out[0] = initialPremium;
  const rng = new RandomStream(deriveSeed(seed, PREMIUM_SEED_KEY), PREMIUM_STREAM);
  let x = initialPremium;
  let sum = 0;
  for (let hour = 1; hour < periods * hoursPerPeriod; hour++) {
    x = MEAN + (x - MEAN) * DECAY + STEP_SD * rng.normal(hour);
    const period = Math.floor(hour / hoursPerPeriod);
    if (period === 0) continue;
    sum += x;
    if ((hour + 1) % hoursPerPeriod === 0) {
      out[period] = sum / hoursPerPeriod;
      sum = 0;
    }
  }
  return out;
}
