/**
 * Log-price path. Coarse level: the log price at block boundaries is a cumulative sum of one
 * increment per block (drift + one normal + the block's jumps), so block k needs only O(k) cheap
 * draws. Fine level: inside a block the diffusive part is a Brownian bridge between the two
 * boundary values, sampled at every book interval; the block's jumps are added from their seeded
 * times on. Together this is exactly GBM / Merton jump-diffusion sampled on the book grid.
 * The `ou` process has its own exact transition and bridge (`ou.ts`) on the same draws.
 */

import { poisson, type RandomStream } from '../../contracts/prng.ts';
import { BLOCK_MS } from './config.ts';
import { fillOuBridge, ouBoundaryStep } from './ou.ts';
import { JUMP_SLOTS, type ModelParams } from './params.ts';

const jumpTimes = new Float64Array(JUMP_SLOTS);
const jumpSizes = new Float64Array(JUMP_SLOTS);

/**
 * Draws the jumps of block k into the module scratch arrays (times: ms from block start; sizes:
 * log jumps) and returns how many there are. Keyed by the model seed and k only.
 */
function drawJumps(p: ModelParams, k: number): number {
  if (p.jumpsPerBlock === 0) return 0;
  const { jumpCount, jumpTime, jumpSize } = p.draws;
  const count = Math.min(
    JUMP_SLOTS,
    poisson(p.jumpsPerBlock, jumpCount.uniform(2 * k), jumpCount.uniform(2 * k + 1)),
  );
  const { jump_mean, jump_std } = p.config;
  for (let j = 0; j < count; j++) {
    const slot = k * JUMP_SLOTS + j;
    jumpTimes[j] = jumpTime.uniform(slot) * BLOCK_MS;
    jumpSizes[j] = jump_mean + jump_std * jumpSize.normal(slot);
  }
  return count;
}

/** Log-price change over block k: drift, one normal, and the sum of the block's jumps. */
function blockIncrement(p: ModelParams, k: number): number {
  let change = p.blockDrift + p.blockSigma * p.draws.price.normal(k);
  const count = drawJumps(p, k);
  for (let j = 0; j < count; j++) change += jumpSizes[j] as number;
  return change;
}

/**
 * Log prices at block boundaries: element k is the log price at the start of block k, element n
 * the end of block n − 1 (length n + 1). Computing it once serves every block below n.
 */
export function boundariesOf(p: ModelParams, blockCount: number): Float64Array {
  const out = new Float64Array(blockCount + 1);
  let x = p.logPrice0;
  out[0] = x;
  const { ou } = p;
  for (let k = 0; k < blockCount; k++) {
    x = ou ? ouBoundaryStep(ou, x, p.draws.price.normal(k)) : x + blockIncrement(p, k);
    out[k + 1] = x;
  }
  return out;
}

/**
 * Fills `out[0..steps]` with the log price at every book time of block k, from `start` (the
 * block's first boundary) to `end` (the next one). `bridge` is the block's BRIDGE stream.
 */
export function fillBlockPath(
  p: ModelParams,
  k: number,
  start: number,
  end: number,
  bridge: RandomStream,
  out: Float64Array,
): void {
  const steps = p.steps;
  if (p.ou) {
    fillOuBridge(p.ou, steps, start, end, bridge, out);
    return;
  }
  const count = drawJumps(p, k);
  let jumpTotal = 0;
  for (let j = 0; j < count; j++) jumpTotal += jumpSizes[j] as number;
  // Brownian bridge of the diffusive part from `start` to `end − jumps`, one step per interval:
  // given x_i, x_{i+1} ~ N(x_i + (target − x_i)/r, v·h·(r − 1)/r) with r steps remaining.
  const target = end - jumpTotal;
  const stepVariance = p.variancePerMs * p.intervalMs;
  let x = start;
  out[0] = start;
  for (let i = 0; i < steps - 1; i++) {
    const remaining = steps - i;
    x +=
      (target - x) / remaining + Math.sqrt((stepVariance * (remaining - 1)) / remaining) * bridge.normal(i);
    out[i + 1] = x;
  }
  out[steps] = target;
  // A jump at time τ shows from the first book time at or after τ.
  for (let j = 0; j < count; j++) {
    const size = jumpSizes[j] as number;
    for (let i = Math.max(1, Math.ceil((jumpTimes[j] as number) / p.intervalMs)); i < steps; i++) {
      out[i] = (out[i] as number) + size;
    }
  }
  out[steps] = end;
}
