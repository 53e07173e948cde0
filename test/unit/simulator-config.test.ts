import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DEFAULT_START_TIME_MS,
  MarketModelConfig,
  parseMarketModelConfig,
} from '../../producers/simulator/config.ts';
import { decimalsOf, Grid } from '../../producers/simulator/grid.ts';

describe('simulator config: defaults and bounds', () => {
  it('fills every default, with price, tick, lot and size derived from the symbol', () => {
    const btc = parseMarketModelConfig();
    expect(btc).toMatchObject({
      symbol: 'BTC',
      initial_price: 65_000,
      tick_size: 0.1,
      lot_size: 0.0001,
      volatility_annual: 0.6,
      price_process: 'gbm',
      book_depth: 10,
      book_update_interval_ms: 100,
      trade_intensity: 5,
      start_time_ms: DEFAULT_START_TIME_MS,
      seed: 42,
    });
    const prices = ['ETH', 'SOL', 'HYPE', 'DOGE'].map((symbol) => parseMarketModelConfig({ symbol }));
    expect(prices.map((c) => [c.initial_price, c.tick_size, c.lot_size])).toEqual([
      [3500, 0.01, 0.001],
      [150, 0.001, 0.01],
      [25, 0.0001, 0.1],
      [100, 0.001, 0.1],
    ]);
  });

  it('is idempotent, so a normalized config parses to itself', () => {
    const once = parseMarketModelConfig({ symbol: 'SOL', seed: 2 ** 52, price_process: 'jump_diffusion' });
    expect(parseMarketModelConfig(once)).toEqual(once);
  });

  it('rejects values out of bounds', () => {
    for (const bad of [
      { book_depth: 0 },
      { book_depth: 101 },
      { book_update_interval_ms: 70 },
      { seed: -1 },
      { seed: 1.5 },
      { volatility_annual: -0.1 },
      { price_process: 'ou' },
      { symbol: 'BTC.USD' },
      { initial_price: 100, tick_size: 50 },
      { tick_size: 0.1234567890123 },
    ]) {
      expect(MarketModelConfig.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('has a JSON Schema for its input (the manifest fields)', () => {
    const schema = z.toJSONSchema(MarketModelConfig, { io: 'input' }) as {
      properties: Record<string, unknown>;
    };
    expect(Object.keys(schema.properties)).toContain('book_update_interval_ms');
    expect(schema.properties.initial_price).toMatchObject({ type: 'number' });
  });
});

describe('simulator grid: exact decimal prices', () => {
  it('counts decimals and prints grid values without binary noise', () => {
    expect([0.1, 0.25, 1e-7, 2.5e-8, 100, 1].map(decimalsOf)).toEqual([1, 2, 7, 9, 0, 0]);
    const tick = new Grid(0.1);
    expect(tick.value(651_234)).toBe(65_123.4);
    expect(tick.halfValue(651_234 * 2 + 1)).toBe(65_123.45);
    expect(new Grid(0.0001).value(3)).toBe(0.0003);
  });
});
