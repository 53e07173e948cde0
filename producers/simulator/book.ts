/**
 * L2 book snapshots around the model mid.
 *
 * - Spread: `initial_spread_bps × volFactor`, where volFactor = 0.5 + 0.5·√(ewma / calm variance)
 *   is 1 at normal short-term volatility and grows with it (capped), rounded to whole ticks and
 *   never below one tick, so the book is never crossed or locked.
 * - Placement: best bid is the tick nearest to (mid − spread/2); best ask is best bid + spread.
 *   Bids descend and asks ascend one tick per level; bid levels at or below price 0 are left out.
 * - Depth: mean size at level j is touch·(1 + j)·e^(−j/7) (rises away from the touch, peaks at
 *   level 6, then decays), thinned by 1/√volFactor when volatile, times a uniform factor in
 *   [0.5, 1.5), rounded to whole lots and at least one lot.
 */
import type { BookLevel, BookSnapshot } from '../../contracts/events.ts';
import type { ModelParams } from './params.ts';
import type { RandomStream } from './prng.ts';

/** Largest spread widening, as a multiple of `initial_spread_bps`. */
export const MAX_VOL_FACTOR = 20;

/** Spread multiplier for an EWMA of squared interval log returns. */
export function volFactor(p: ModelParams, ewmaVariance: number): number {
  if (!(p.intervalVariance > 0)) return 1;
  return Math.min(MAX_VOL_FACTOR, 0.5 + 0.5 * Math.sqrt(ewmaVariance / p.intervalVariance));
}

/** BOOK counter of a level's size noise: two per level (bid, ask), `book_depth` levels per side. */
const noiseIndex = (p: ModelParams, snapshot: number, level: number): number =>
  (snapshot * p.config.book_depth + level) * 2;

function levelLots(p: ModelParams, level: number, thin: number, u: number): number {
  return Math.max(1, Math.round((p.depthProfile[level] as number) * thin * (0.5 + u)));
}

/**
 * Book snapshot number `snapshot` of its block at log mid `logMid`. `noise` is the block's BOOK
 * stream; timestamps are Unix ms.
 */
export function buildBook(
  p: ModelParams,
  snapshot: number,
  timestampMs: number,
  captureMs: number,
  logMid: number,
  factor: number,
  noise: RandomStream,
): BookSnapshot {
  const { tick, lot, config } = p;
  const center = Math.exp(logMid) / tick.step;
  const spreadTicks = Math.max(1, Math.round(config.initial_spread_bps * factor * 1e-4 * center));
  const bidTick = Math.max(1, Math.floor(center - spreadTicks / 2 + 0.5));
  const askTick = bidTick + spreadTicks;
  const thin = 1 / Math.sqrt(factor);
  const depth = Math.min(config.book_depth, bidTick);
  const bids: BookLevel[] = [];
  const asks: BookLevel[] = [];
  for (let level = 0; level < config.book_depth; level++) {
    const index = noiseIndex(p, snapshot, level);
    if (level < depth) {
      const lots = levelLots(p, level, thin, noise.fraction(index));
      bids.push({ price: tick.value(bidTick - level), size: lot.value(lots) });
    }
    const lots = levelLots(p, level, thin, noise.fraction(index + 1));
    asks.push({ price: tick.value(askTick + level), size: lot.value(lots) });
  }
  const bestBid = tick.value(bidTick);
  const bestAsk = tick.value(askTick);
  const mid = tick.halfValue(bidTick + askTick);
  return {
    event_type: 'book',
    source: 'synthetic',
    symbol: config.symbol,
    timestamp_ms: timestampMs,
    capture_time_ms: captureMs,
    bids,
    asks,
    best_bid: bestBid,
    best_ask: bestAsk,
    mid_price: mid,
    spread_bps: ((bestAsk - bestBid) / mid) * 10_000,
  };
}
