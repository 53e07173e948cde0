import { describe, expect, it } from 'vitest';
import type { TradeEvent } from '../../contracts/events.ts';
import { type MarketModelConfigInput, parseMarketModelConfig } from '../../producers/simulator/config.ts';
import { eventsBetween } from '../../producers/simulator/market.ts';
import { MS_PER_YEAR } from '../../producers/simulator/params.ts';

const HOURS = 6;
const SAMPLE_MS = 1000;

/** Log returns of the mid price sampled every SAMPLE_MS over HOURS hours (books only). */
function midReturns(input: MarketModelConfigInput): Float64Array {
  const config = parseMarketModelConfig({ book_depth: 1, trade_intensity: 0, ...input });
  const mids: number[] = [];
  for (const e of eventsBetween(config, 0, HOURS * 3_600_000)) {
    if (e.event_type === 'book' && (e.timestamp_ms - config.start_time_ms) % SAMPLE_MS === 0)
      mids.push(e.mid_price);
  }
  return Float64Array.from({ length: mids.length - 1 }, (_, i) =>
    Math.log((mids[i + 1] as number) / (mids[i] as number)),
  );
}

function excessKurtosis(r: Float64Array): number {
  const mean = r.reduce((s, x) => s + x, 0) / r.length;
  const m2 = r.reduce((s, x) => s + (x - mean) ** 2, 0) / r.length;
  const m4 = r.reduce((s, x) => s + (x - mean) ** 4, 0) / r.length;
  return m4 / m2 ** 2 - 3;
}

describe('simulator market model: statistics', () => {
  it('realizes the configured annual volatility for gbm', () => {
    for (const [symbol, volatility] of [
      ['BTC', 0.6],
      ['SOL', 0.9],
    ] as const) {
      const r = midReturns({ symbol, volatility_annual: volatility, seed: 3 });
      const realized = Math.sqrt((r.reduce((s, x) => s + x * x, 0) / r.length) * (MS_PER_YEAR / SAMPLE_MS));
      // n = 21,599 one-second returns: the estimator's relative standard error is 1/√(2n) ≈ 0.48 %.
      // A ±3 % band is over 6 standard errors, with room for the tick rounding of the mid.
      expect(r.length).toBe(HOURS * 3600 - 1);
      expect(Math.abs(realized / volatility - 1)).toBeLessThan(0.03);
    }
  });

  it('has fatter tails under jump_diffusion than under gbm', () => {
    const gbm = excessKurtosis(midReturns({ seed: 5 }));
    const jumps = excessKurtosis(
      midReturns({ seed: 5, price_process: 'jump_diffusion', jump_intensity_per_day: 24, jump_std: 0.005 }),
    );
    // Gaussian returns: excess kurtosis 0 with standard error √(24/n) ≈ 0.033.
    expect(Math.abs(gbm)).toBeLessThan(0.2);
    expect(jumps).toBeGreaterThan(gbm + 5);
  });

  it('trades at the configured mean intensity and size, leaning with the price move', () => {
    const config = parseMarketModelConfig({ symbol: 'BTC', seed: 9, book_depth: 1 });
    const minutes = 30;
    const trades: TradeEvent[] = [];
    let pending: TradeEvent[] = [];
    let lastMid: number | undefined;
    let moved = 0;
    let agreed = 0;
    for (const e of eventsBetween(config, 0, minutes * 60_000)) {
      if (e.event_type === 'trade') {
        trades.push(e);
        pending.push(e);
        continue;
      }
      // Trades between two books lean toward the move from the first book's mid to the second's.
      if (lastMid !== undefined && e.mid_price !== lastMid) {
        const side = e.mid_price > lastMid ? 'buy' : 'sell';
        moved += pending.length;
        agreed += pending.filter((t) => t.side === side).length;
      }
      [pending, lastMid] = [[], e.mid_price];
    }
    const perSecond = trades.length / (minutes * 60);
    // Bursts (×5 for ~5 s, entered ~1 % of seconds) over-disperse the count: ±15 % is ~4 sd.
    expect(Math.abs(perSecond / config.trade_intensity - 1)).toBeLessThan(0.15);
    const meanSize = trades.reduce((s, t) => s + t.size, 0) / trades.length;
    // Lomax sd is √(α/(α−2)) ≈ 2.2 means: the standard error over ~9,000 trades is ~2.4 %.
    expect(Math.abs(meanSize / config.size_mean - 1)).toBeLessThan(0.12);
    // side_lean 0.2: P(agree) = 0.5 + 0.2·E|tanh(Z)| ≈ 0.62; the standard error is ~0.005.
    expect(agreed / moved).toBeGreaterThan(0.57);
    const buys = trades.filter((t) => t.side === 'buy').length / trades.length;
    expect(Math.abs(buys - 0.5)).toBeLessThan(0.05);
  });
});
