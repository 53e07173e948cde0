/**
 * The market model's composition root: price path → books → trades, block by block.
 *
 * Model time is cut into blocks of BLOCK_MS. The events of block k depend only on (config, k):
 * its boundary log prices come from a cheap O(k) sum, and every draw inside it is keyed by a seed
 * derived from (model seed, k) and a counter. So a block computed alone equals the same block
 * computed after others, and batch generation can split any range over workers and windows.
 * Block k holds the books at offsets [kT, (k+1)T) and the trades in (kT, (k+1)T]; events are
 * sorted by timestamp_ms with a trade before the book of the same ms.
 *
 * Books are built packed (levels in flat arrays): `rowsBetween` hands them on so for batch
 * generation, which copies them into columns; `simulateBlock` and `eventsBetween` unpack them
 * into the contract's `BookSnapshot`.
 */
import type { SimulatedEvent, TradeEvent } from '../../contracts/events.ts';
import { deriveSeed, RandomStream, STREAM } from '../../contracts/prng.ts';
import { BlockLevels, buildBook, type PackedBook, unpackBook, volFactor } from './book.ts';
import { BLOCK_MS, type ModelConfig } from './config.ts';
import { bookLatencyIndex, captureTimeMs } from './latency.ts';
import { deriveParams, type ModelParams } from './params.ts';
import { boundariesOf, fillBlockPath } from './price-path.ts';
import { advanceRegime, appendTrades, createTradeState, type TradeDraws } from './trades.ts';

export type { PackedBook } from './book.ts';
export { BLOCK_MS } from './config.ts';

/** An event as the model builds it: a trade, or a book with its levels packed. */
export type ModelRow = TradeEvent | PackedBook;

const unpack = (row: ModelRow): SimulatedEvent => (row.event_type === 'book' ? unpackBook(row) : row);

/**
 * Log prices at block boundaries for blocks [0, blockCount): element k is the log mid at the start
 * of block k, element blockCount the end of the last block. Pass it to `simulateBlock` to share
 * the O(k) sum across blocks.
 */
export function boundaryLogPrices(config: ModelConfig, blockCount: number): Float64Array {
  return boundariesOf(deriveParams(config), blockCount);
}

/** Index of the block whose books cover model time offset `offsetMs`. */
export const blockOf = (offsetMs: number): number => Math.floor(offsetMs / BLOCK_MS);

function blockStreams(p: ModelParams, k: number): TradeDraws & { bridge: RandomStream; book: RandomStream } {
  const seed = deriveSeed(p.seed, k);
  return {
    bridge: new RandomStream(seed, STREAM.BRIDGE),
    book: new RandomStream(seed, STREAM.BOOK),
    regime: new RandomStream(seed, STREAM.REGIME),
    count: new RandomStream(seed, STREAM.TRADE_COUNT),
    time: new RandomStream(seed, STREAM.TRADE_TIME),
    side: new RandomStream(seed, STREAM.SIDE),
    size: new RandomStream(seed, STREAM.SIZE),
    latency: new RandomStream(seed, STREAM.LATENCY),
  };
}

function generateBlock(p: ModelParams, k: number, boundary: Float64Array | undefined): ModelRow[] {
  const bounds = boundary !== undefined && boundary.length >= k + 2 ? boundary : boundariesOf(p, k + 1);
  const draws = blockStreams(p, k);
  const path = new Float64Array(p.steps + 1);
  fillBlockPath(p, k, bounds[k] as number, bounds[k + 1] as number, draws.bridge, path);
  const { config } = p;
  const out: ModelRow[] = [];
  const levels = new BlockLevels(p.steps, config.book_depth);
  const state = createTradeState();
  const blockStartMs = config.start_time_ms + k * BLOCK_MS;
  // Short-term variance for the spread; each block starts at the calm level (no carried state).
  let ewma = p.intervalVariance;
  let previous = path[0] as number;
  for (let i = 0; i < p.steps; i++) {
    const logMid = path[i] as number;
    const r = logMid - previous;
    if (i > 0) ewma += p.ewmaAlpha * (r * r - ewma);
    previous = logMid;
    const timestampMs = blockStartMs + i * p.intervalMs;
    const captureMs = captureTimeMs(config, draws.latency, timestampMs, bookLatencyIndex(i));
    const book = buildBook(p, i, timestampMs, captureMs, logMid, volFactor(p, ewma), draws.book, levels);
    out.push(book);
    advanceRegime(p, draws, i, state);
    appendTrades(p, draws, state, book, k, i, (path[i + 1] as number) - logMid, out);
  }
  return out;
}

/**
 * Events of block `blockIndex` (model time [k·BLOCK_MS, (k+1)·BLOCK_MS]), sorted by timestamp_ms
 * with trades before the book of the same ms. `boundary` (from `boundaryLogPrices`, covering at
 * least blockIndex + 1 blocks) saves recomputing the boundary sum; the output is the same.
 */
export function simulateBlock(
  config: ModelConfig,
  blockIndex: number,
  boundary?: Float64Array,
): SimulatedEvent[] {
  if (!Number.isSafeInteger(blockIndex) || blockIndex < 0) throw new RangeError('blockIndex must be >= 0');
  return generateBlock(deriveParams(config), blockIndex, boundary).map(unpack);
}

/**
 * Events with model time offset in [fromMs, toMs) (timestamp_ms − start_time_ms), in order.
 * Consecutive ranges concatenate to the events of their union.
 */
export function* eventsBetween(config: ModelConfig, fromMs: number, toMs: number): Generator<SimulatedEvent> {
  for (const row of rowsBetween(config, fromMs, toMs)) yield unpack(row);
}

/** `eventsBetween` with books left packed: the same events, without an object per level. */
export function* rowsBetween(config: ModelConfig, fromMs: number, toMs: number): Generator<ModelRow> {
  if (!(toMs > fromMs)) return;
  if (fromMs < 0) throw new RangeError('fromMs must be >= 0');
  const p = deriveParams(config);
  // A block's last trades may sit on the next block's first ms, hence the block before `fromMs`.
  const first = Math.max(0, Math.ceil(fromMs / BLOCK_MS) - 1);
  const last = blockOf(toMs - 1);
  const bounds = boundariesOf(p, last + 1);
  const from = config.start_time_ms + fromMs;
  const to = config.start_time_ms + toMs;
  for (let k = first; k <= last; k++) {
    for (const event of generateBlock(p, k, bounds)) {
      if (event.timestamp_ms >= from && event.timestamp_ms < to) yield event;
    }
  }
}
