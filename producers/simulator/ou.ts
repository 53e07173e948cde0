/**
 * Ornstein–Uhlenbeck log price: dX = κ(θ − X)dt + σ dW with θ = ln(ou_long_run_price).
 *
 * Like GBM, it keeps block k computable from (config, k) alone: the boundary values are an O(k)
 * recursion over the exact transition X[k+1] = θ + (X[k] − θ)e^(−κT) + s_T·Z_k (one PRICE normal
 * per block, the same draw GBM uses), and inside a block the path is the exact OU bridge between
 * the two boundaries, sampled at every book interval with one BRIDGE normal per step. So the
 * sampled path has exactly the law of OU on the book grid; κ = 0 gives the Brownian bridge.
 *
 * Bridge step, r intervals of h before the end value E (Y = X − θ, a = e^(−κh)):
 *   given Y_i and Y_E, Y_{i+1} ~ N(a·Y_i + g_r·(Y_E − e^(−κrh)·Y_i), s_r²) with
 *   g_r = b·V(h) / (b²V(h) + V((r−1)h)), s_r² = V(h)·V((r−1)h) / (b²V(h) + V((r−1)h)),
 *   b = e^(−κ(r−1)h), V(t) = σ²(1 − e^(−2κt)) / (2κ) the variance OU noise builds over t.
 * The constants depend on r only, so they are computed once per config.
 */

import type { RandomStream } from '../../contracts/prng.ts';
import { BLOCK_MS, type GenerationModelConfig } from './config.ts';

/** OU constants in model units (log price, ms). Arrays are indexed by intervals remaining. */
export type OuParams = {
  /** θ: ln of the long-run price. */
  readonly logLevel: number;
  /** e^(−κT) and the transition's standard deviation over one block. */
  readonly blockDecay: number;
  readonly blockSd: number;
  /** a = e^(−κh) over one book interval. */
  readonly stepDecay: number;
  /** e^(−κrh), the bridge gain g_r and standard deviation s_r, for r = 2..steps. */
  readonly reach: Float64Array;
  readonly gain: Float64Array;
  readonly sd: Float64Array;
};

/** Variance of OU noise accumulated over t ms (σ² t when κ = 0); expm1 keeps small κt exact. */
function noiseVariance(variancePerMs: number, kappaPerMs: number, t: number): number {
  if (!(kappaPerMs > 0)) return variancePerMs * t;
  return (variancePerMs * -Math.expm1(-2 * kappaPerMs * t)) / (2 * kappaPerMs);
}

/** Derives the OU constants; κ is per year (`msPerYear` ms), σ² per ms. */
export function deriveOuParams(
  config: GenerationModelConfig,
  intervalMs: number,
  steps: number,
  variancePerMs: number,
  msPerYear: number,
): OuParams {
  const kappa = config.ou_mean_reversion / msPerYear;
  const stepVariance = noiseVariance(variancePerMs, kappa, intervalMs);
  const reach = new Float64Array(steps + 1);
  const gain = new Float64Array(steps + 1);
  const sd = new Float64Array(steps + 1);
  for (let r = 2; r <= steps; r++) {
    const b = Math.exp(-kappa * (r - 1) * intervalMs);
    const rest = noiseVariance(variancePerMs, kappa, (r - 1) * intervalMs);
    const total = b * b * stepVariance + rest;
    reach[r] = Math.exp(-kappa * r * intervalMs);
    // σ = 0 leaves no noise to share: the path is the deterministic decay (gain 0, sd 0).
    gain[r] = total > 0 ? (b * stepVariance) / total : 0;
    sd[r] = total > 0 ? Math.sqrt((stepVariance * rest) / total) : 0;
  }
  return {
    logLevel: Math.log(config.ou_long_run_price),
    blockDecay: Math.exp(-kappa * BLOCK_MS),
    blockSd: Math.sqrt(noiseVariance(variancePerMs, kappa, BLOCK_MS)),
    stepDecay: Math.exp(-kappa * intervalMs),
    reach,
    gain,
    sd,
  };
}

/** Log price at the next block boundary from `x`, given the block's PRICE normal `z`. */
export function ouBoundaryStep(ou: OuParams, x: number, z: number): number {
  return ou.logLevel + (x - ou.logLevel) * ou.blockDecay + ou.blockSd * z;
}

/** Fills `out[0..steps]` with the OU bridge from `start` to `end`; `bridge` is the block's BRIDGE stream. */
export function fillOuBridge(
  ou: OuParams,
  steps: number,
  start: number,
  end: number,
  bridge: RandomStream,
  out: Float64Array,
): void {
  const theta = ou.logLevel;
  const endDeviation = end - theta;
  let y = start - theta;
  out[0] = start;
  for (let i = 0; i < steps - 1; i++) {
    const r = steps - i;
    const mean = ou.stepDecay * y + (ou.gain[r] as number) * (endDeviation - (ou.reach[r] as number) * y);
    y = mean + (ou.sd[r] as number) * bridge.normal(i);
    out[i + 1] = theta + y;
  }
  out[steps] = end;
}
