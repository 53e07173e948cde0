/**
 * Trades. Arrivals are Poisson per book interval with a two-state (calm / burst) Markov regime
 * that switches once per interval; the calm intensity is set so that the long-run mean is
 * `trade_intensity`. A trade of interval i happens in (t_i, t_i + interval], executes against the
 * book of t_i at the touch (a buy lifts the best ask, a sell hits the best bid), and therefore
 * comes before the next book when both share a millisecond. The aggressor side leans with the
 * interval's price move: P(buy) = 0.5 + side_lean·tanh(move / σ_interval). Sizes are Lomax
 * (Pareto II: many small trades, a power-law tail of index `size_tail_alpha`) with mean
 * `size_mean`, capped at 1000 × mean, rounded to whole lots and at least one lot.
 */
import type { BookSnapshot, TradeEvent } from '../../contracts/events.ts';
import { poisson, type RandomStream } from '../../contracts/prng.ts';
import { captureTimeMs, tradeLatencyIndex } from './latency.ts';
import type { ModelParams } from './params.ts';

/** The block's trade-related streams. */
export type TradeDraws = {
  readonly regime: RandomStream;
  readonly count: RandomStream;
  readonly time: RandomStream;
  readonly side: RandomStream;
  readonly size: RandomStream;
  readonly latency: RandomStream;
};

/** Mutable per-block state: next trade ordinal, current regime, scratch for trade times. */
export type TradeState = { ordinal: number; burst: boolean; times: Int32Array };

export const createTradeState = (): TradeState => ({ ordinal: 0, burst: false, times: new Int32Array(64) });

const MAX_SIZE_MULTIPLE = 1000;

/**
 * Regime for interval i: drawn from the stationary law at i = 0 (so a block never depends on the
 * previous one), then a Markov step per interval (REGIME counter i).
 */
export function advanceRegime(p: ModelParams, draws: TradeDraws, interval: number, state: TradeState): void {
  const u = draws.regime.uniform(interval);
  if (interval === 0) state.burst = u < p.burstShare;
  else state.burst = state.burst ? u >= p.burstExit : u < p.burstEnter;
}

/** Draws `count` trade offsets in [1, intervalMs] into the scratch, sorted ascending. */
function drawTimes(p: ModelParams, draws: TradeDraws, state: TradeState, count: number): Int32Array {
  if (state.times.length < count) state.times = new Int32Array(Math.max(count, 2 * state.times.length));
  const times = state.times;
  for (let j = 0; j < count; j++) {
    times[j] = 1 + Math.floor(draws.time.uniform(state.ordinal + j) * p.intervalMs);
  }
  if (count > 16) times.subarray(0, count).sort();
  else {
    for (let j = 1; j < count; j++) {
      const t = times[j] as number;
      let m = j - 1;
      for (; m >= 0 && (times[m] as number) > t; m--) times[m + 1] = times[m] as number;
      times[m + 1] = t;
    }
  }
  return times;
}

function sizeLots(p: ModelParams, u: number): number {
  const { config } = p;
  // (1 − u)^(−1/α) − 1, by expm1/log1p: exact for small u and cheaper than Math.pow.
  const lomax = p.sizeScale * Math.expm1(Math.log1p(-u) * p.sizeExponent);
  const raw = Math.min(lomax, MAX_SIZE_MULTIPLE * config.size_mean);
  return Math.max(1, Math.round(raw / config.lot_size));
}

/**
 * Appends the trades of interval `interval` of block `block` to `out`. `startMs` is the book's
 * timestamp (t_i, Unix ms) and `move` the log-price change from t_i to t_i + interval.
 */
export function appendTrades(
  p: ModelParams,
  draws: TradeDraws,
  state: TradeState,
  book: Pick<BookSnapshot, 'timestamp_ms' | 'best_bid' | 'best_ask'>,
  block: number,
  interval: number,
  move: number,
  out: { push(trade: TradeEvent): number },
): void {
  const mean = state.burst ? p.burstTrades : p.calmTrades;
  const count = poisson(mean, draws.count.uniform(2 * interval), draws.count.uniform(2 * interval + 1));
  if (count === 0) return;
  const times = drawTimes(p, draws, state, count);
  const { config } = p;
  const sd = Math.sqrt(p.intervalVariance);
  const pBuy = 0.5 + config.side_lean * (sd > 0 ? Math.tanh(move / sd) : Math.sign(move));
  const prefix = `trd_${config.symbol}_${block}_`;
  for (let j = 0; j < count; j++) {
    const ordinal = state.ordinal + j;
    const timestampMs = book.timestamp_ms + (times[j] as number);
    const buy = draws.side.uniform(ordinal) < pBuy;
    const price = buy ? book.best_ask : book.best_bid;
    const size = p.lot.value(sizeLots(p, draws.size.uniform(ordinal)));
    const trade: TradeEvent = {
      event_type: 'trade',
      source: 'synthetic',
      symbol: config.symbol,
      timestamp_ms: timestampMs,
      capture_time_ms: captureTimeMs(config, draws.latency, timestampMs, tradeLatencyIndex(ordinal)),
      side: buy ? 'buy' : 'sell',
      price,
      size,
      trade_id: prefix + ordinal,
      notional_usd: Math.round(price * size * 1e8) / 1e8, // USD to 1e-8: no binary-float tails on the wire
    };
    out.push(trade);
  }
  state.ordinal += count;
}
