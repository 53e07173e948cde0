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
 *
 * A snapshot is built packed: its levels go to its block's `BlockLevels` (four flat arrays) and
 * not to one object per level, because batch generation only copies them into columns.
 * `unpackBook` gives the contract's `BookSnapshot`, field for field what a packed book holds.
 */
import type { BookLevel, BookSnapshot } from '../../contracts/events.ts';
import type { RandomStream } from '../../contracts/prng.ts';
import type { ModelParams } from './params.ts';

/** Largest spread widening, as a multiple of `initial_spread_bps`. */
export const MAX_VOL_FACTOR = 20;

/** Spread multiplier for an EWMA of squared interval log returns. */
export function volFactor(p: ModelParams, ewmaVariance: number): number {
  if (!(p.intervalVariance > 0)) return 1;
  return Math.min(MAX_VOL_FACTOR, 0.5 + 0.5 * Math.sqrt(ewmaVariance / p.intervalVariance));
}

/**
 * Levels of a block's snapshots as grid values: snapshot i's level j of a side is element
 * i·book_depth + j of that side's arrays (a side may use fewer than book_depth of its slots).
 */
export class BlockLevels {
  readonly bidPrice: Float64Array;
  readonly bidSize: Float64Array;
  readonly askPrice: Float64Array;
  readonly askSize: Float64Array;
  /** Scratch: one snapshot's size noise (bid, ask per level). */
  readonly noise: Float64Array;

  constructor(snapshots: number, depth: number) {
    this.noise = new Float64Array(2 * depth);
    const all = new Float64Array(4 * snapshots * depth);
    const side = snapshots * depth;
    this.bidPrice = all.subarray(0, side);
    this.bidSize = all.subarray(side, 2 * side);
    this.askPrice = all.subarray(2 * side, 3 * side);
    this.askSize = all.subarray(3 * side);
  }
}

/** A book snapshot whose levels stay in its block's `BlockLevels` (see `unpackBook`). */
export type PackedBook = Omit<BookSnapshot, 'bids' | 'asks'> & {
  readonly levels: BlockLevels;
  /** Index of the snapshot's first level in `levels`' arrays. */
  readonly at: number;
  readonly bidCount: number;
  readonly askCount: number;
};

/** BOOK counter of a level's size noise: two per level (bid, ask), `book_depth` levels per side. */
const noiseIndex = (p: ModelParams, snapshot: number, level: number): number =>
  (snapshot * p.config.book_depth + level) * 2;

/** Lots at a level of mean size `mean` (depth profile × thin) for the uniform `u`. */
const levelLots = (mean: number, u: number): number => Math.max(1, Math.round(mean * (0.5 + u)));

/**
 * Book snapshot number `snapshot` of its block at log mid `logMid`, its levels written to
 * `levels` (sized for the block). `noise` is the block's BOOK stream; timestamps are Unix ms.
 */
export function buildBook(
  p: ModelParams,
  snapshot: number,
  timestampMs: number,
  captureMs: number,
  logMid: number,
  factor: number,
  noise: RandomStream,
  levels: BlockLevels,
): PackedBook {
  const { tick, lot, config } = p;
  const center = Math.exp(logMid) / tick.step;
  const spreadTicks = Math.max(1, Math.round(config.initial_spread_bps * factor * 1e-4 * center));
  const bidTick = Math.max(1, Math.floor(center - spreadTicks / 2 + 0.5));
  const askTick = bidTick + spreadTicks;
  const thin = 1 / Math.sqrt(factor);
  const depth = Math.min(config.book_depth, bidTick);
  const at = snapshot * config.book_depth;
  const u = levels.noise;
  noise.fractions(noiseIndex(p, snapshot, 0), 2 * config.book_depth, u);
  const { bidPrice, bidSize, askPrice, askSize } = levels;
  const profile = p.depthProfile;
  for (let level = 0; level < config.book_depth; level++) {
    const mean = (profile[level] as number) * thin;
    if (level < depth) {
      bidPrice[at + level] = tick.value(bidTick - level);
      bidSize[at + level] = lot.value(levelLots(mean, u[2 * level] as number));
    }
    askPrice[at + level] = tick.value(askTick + level);
    askSize[at + level] = lot.value(levelLots(mean, u[2 * level + 1] as number));
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
    best_bid: bestBid,
    best_ask: bestAsk,
    mid_price: mid,
    spread_bps: ((bestAsk - bestBid) / mid) * 10_000,
    levels,
    at,
    bidCount: depth,
    askCount: config.book_depth,
  };
}

function side(prices: Float64Array, sizes: Float64Array, at: number, count: number): BookLevel[] {
  const out: BookLevel[] = [];
  for (let j = at; j < at + count; j++) out.push({ price: prices[j] as number, size: sizes[j] as number });
  return out;
}

/** The contract's snapshot of a packed book (fields in the order the model always emitted). */
export function unpackBook(book: PackedBook): BookSnapshot {
  const { levels, at } = book;
  return {
    event_type: book.event_type,
    source: book.source,
    symbol: book.symbol,
    timestamp_ms: book.timestamp_ms,
    capture_time_ms: book.capture_time_ms,
    bids: side(levels.bidPrice, levels.bidSize, at, book.bidCount),
    asks: side(levels.askPrice, levels.askSize, at, book.askCount),
    best_bid: book.best_bid,
    best_ask: book.best_ask,
    mid_price: book.mid_price,
    spread_bps: book.spread_bps,
  };
}
