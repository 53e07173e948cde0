/**
 * Turns a model configuration into the constants the generators use, in model units (log price,
 * ms, grid steps, events per book interval). Computed once per config, shared by every block.
 */

import { deriveSeed, hashString, RandomStream, STREAM } from '../../contracts/prng.ts';
import { BLOCK_MS, type ModelConfig } from './config.ts';
import { Grid } from './grid.ts';
import { deriveOuParams, type OuParams } from './ou.ts';

/** Crypto trades all year: volatility and drift are annualised over 365 days. */
export const MS_PER_YEAR = 365 * 86_400_000;
const MS_PER_DAY = 86_400_000;

/** Most jumps drawn per block; at the 100/day bound the mean per block is 0.07. */
export const JUMP_SLOTS = 16;

/** Depth profile (1 + j)·e^(−j/D): rises away from the touch, peaks at level D − 1, then decays. */
const DEPTH_DECAY_LEVELS = 7;

export type ModelParams = {
  readonly config: ModelConfig;
  /** Seed of this symbol's model: (config.seed, symbol), so two symbols never share a path. */
  readonly seed: number;
  /** Model-level streams (keyed by block index): boundary normals and jumps. */
  readonly draws: {
    readonly price: RandomStream;
    readonly jumpCount: RandomStream;
    readonly jumpTime: RandomStream;
    readonly jumpSize: RandomStream;
  };
  readonly intervalMs: number;
  /** Book snapshots per block. */
  readonly steps: number;
  /** ln(initial_price). */
  readonly logPrice0: number;
  /** Deterministic part of the log-price change over one block (Itô and jump compensation). */
  readonly blockDrift: number;
  /** Standard deviation of the diffusive log-price change over one block. */
  readonly blockSigma: number;
  /** Variance of the diffusive log-price change per ms. */
  readonly variancePerMs: number;
  /** Mean number of jumps per block (0 for gbm and ou). */
  readonly jumpsPerBlock: number;
  /** Ornstein–Uhlenbeck constants when price_process is `ou`, else null (gbm, jump_diffusion). */
  readonly ou: OuParams | null;
  readonly tick: Grid;
  readonly lot: Grid;
  /** EWMA weight of the newest squared return (1 s half-life), for the spread. */
  readonly ewmaAlpha: number;
  /** Expected squared log return over one book interval: the EWMA's calm level. */
  readonly intervalVariance: number;
  /** Mean resting size by level from the touch, lots, at normal volatility. */
  readonly depthProfile: Float64Array;
  /** Regime switching probabilities per book interval, and the stationary burst share. */
  readonly burstEnter: number;
  readonly burstExit: number;
  readonly burstShare: number;
  /** Mean trades per book interval when calm and in a burst. */
  readonly calmTrades: number;
  readonly burstTrades: number;
  /** Lomax (Pareto II) scale of trade sizes, base units: mean = scale / (alpha − 1) = size_mean. */
  readonly sizeScale: number;
  /** −1 / size_tail_alpha. */
  readonly sizeExponent: number;
};

const perInterval = (perSecond: number, intervalMs: number): number =>
  1 - (1 - perSecond) ** (intervalMs / 1000);

/** Derives the model constants of a parsed configuration. */
export function deriveParams(config: ModelConfig): ModelParams {
  const intervalMs = config.book_update_interval_ms;
  const sigma = config.volatility_annual;
  const blockYears = BLOCK_MS / MS_PER_YEAR;
  const jumping = config.price_process === 'jump_diffusion';
  const jumpsPerBlock = jumping ? (config.jump_intensity_per_day * BLOCK_MS) / MS_PER_DAY : 0;
  // Merton compensation: E[e^J] − 1 per jump, so that `drift` stays the expected price return.
  const jumpCompensation = jumpsPerBlock * (Math.exp(config.jump_mean + config.jump_std ** 2 / 2) - 1);
  const burstEnter = perInterval(config.burst_enter_prob, intervalMs);
  const burstExit = perInterval(config.burst_exit_prob, intervalMs);
  const burstShare = burstEnter / (burstEnter + burstExit);
  const meanTrades = (config.trade_intensity * intervalMs) / 1000;
  const calmTrades = meanTrades / (1 - burstShare + burstShare * config.burst_multiplier);
  const lot = new Grid(config.lot_size);
  const touchLots = (2 * config.size_mean) / config.lot_size;
  const depthProfile = new Float64Array(config.book_depth);
  for (let level = 0; level < config.book_depth; level++) {
    depthProfile[level] = touchLots * (1 + level) * Math.exp(-level / DEPTH_DECAY_LEVELS);
  }
  const seed = deriveSeed(config.seed, hashString(config.symbol));
  const steps = BLOCK_MS / intervalMs;
  const variancePerMs = sigma ** 2 / MS_PER_YEAR;
  const ou =
    config.price_process === 'ou'
      ? deriveOuParams(config, intervalMs, steps, variancePerMs, MS_PER_YEAR)
      : null;
  return {
    config,
    seed,
    draws: {
      price: new RandomStream(seed, STREAM.PRICE),
      jumpCount: new RandomStream(seed, STREAM.JUMP_COUNT),
      jumpTime: new RandomStream(seed, STREAM.JUMP_TIME),
      jumpSize: new RandomStream(seed, STREAM.JUMP_SIZE),
    },
    intervalMs,
    steps,
    logPrice0: Math.log(config.initial_price),
    blockDrift: (config.drift - sigma ** 2 / 2) * blockYears - jumpCompensation,
    blockSigma: sigma * Math.sqrt(blockYears),
    variancePerMs,
    jumpsPerBlock,
    ou,
    tick: new Grid(config.tick_size),
    lot,
    ewmaAlpha: 1 - 0.5 ** (intervalMs / 1000),
    intervalVariance: (sigma ** 2 * intervalMs) / MS_PER_YEAR,
    depthProfile,
    burstEnter,
    burstExit,
    burstShare,
    calmTrades,
    burstTrades: calmTrades * config.burst_multiplier,
    sizeScale: config.size_mean * (config.size_tail_alpha - 1),
    sizeExponent: -1 / config.size_tail_alpha,
  };
}
