import { describe, expect, it } from 'vitest';
import { type BookSnapshot, MarketEvent, type TradeEvent } from '../../contracts/events.ts';
import { parseMarketModelConfig } from '../../producers/simulator/config.ts';
import {
  BLOCK_MS,
  boundaryLogPrices,
  eventsBetween,
  simulateBlock,
} from '../../producers/simulator/market.ts';

const config = parseMarketModelConfig({ symbol: 'BTC', seed: 7 });
// Jumps every few minutes and frequent bursts, so that every code path runs in a few blocks.
const jumpy = parseMarketModelConfig({
  symbol: 'ETH',
  seed: 7,
  price_process: 'jump_diffusion',
  jump_intensity_per_day: 100,
  jump_std: 0.02,
  burst_enter_prob: 0.2,
  trade_intensity: 40,
});

const onGrid = (value: number, step: number): boolean =>
  Math.abs(value / step - Math.round(value / step)) < 1e-6;

describe('simulator market model: determinism', () => {
  it('computes block k alone exactly as after the blocks before it', () => {
    for (const c of [config, jumpy]) {
      const bounds = boundaryLogPrices(c, 6);
      const inOrder = [0, 1, 2, 3, 4, 5].map((k) => simulateBlock(c, k, bounds));
      expect(simulateBlock(c, 5)).toEqual(inOrder[5]);
      expect(simulateBlock(c, 2)).toEqual(inOrder[2]);
    }
  });

  it('gives identical events for equal configs and different events for another seed or symbol', () => {
    const again = parseMarketModelConfig({ symbol: 'BTC', seed: 7 });
    expect(simulateBlock(again, 1)).toEqual(simulateBlock(config, 1));
    const otherSeed = simulateBlock({ ...config, seed: 8 }, 1);
    expect(otherSeed).not.toEqual(simulateBlock(config, 1));
    const first = (c: typeof config) => (simulateBlock(c, 0)[1] as BookSnapshot).mid_price / c.initial_price;
    expect(first({ ...config, symbol: 'XBT' })).not.toBe(first(config));
  });

  it('continues the path across block boundaries (the first book of block k+1 sits on the boundary)', () => {
    const bounds = boundaryLogPrices(config, 3);
    const book = simulateBlock(config, 2, bounds)[0] as BookSnapshot;
    expect(Math.abs(Math.log(book.mid_price) - (bounds[2] as number))).toBeLessThan(1e-4);
    expect(book.timestamp_ms).toBe(config.start_time_ms + 2 * BLOCK_MS);
  });

  it('makes eventsBetween ranges concatenate to their union, across block edges', () => {
    const whole = [...eventsBetween(jumpy, 30_000, 150_000)];
    const parts = [...eventsBetween(jumpy, 30_000, 60_000), ...eventsBetween(jumpy, 60_000, 150_000)];
    expect(parts).toEqual(whole);
    const blocks = [0, 1, 2].flatMap((k) => simulateBlock(jumpy, k));
    const start = jumpy.start_time_ms;
    expect(whole).toEqual(
      blocks.filter((e) => e.timestamp_ms >= start + 30_000 && e.timestamp_ms < start + 150_000),
    );
    expect([...eventsBetween(jumpy, 5, 5)]).toEqual([]);
  });
});

describe('simulator market model: event invariants', () => {
  const events = [0, 1, 2, 3].flatMap((k) => simulateBlock(jumpy, k));
  const books = events.filter((e): e is BookSnapshot => e.event_type === 'book');
  const trades = events.filter((e): e is TradeEvent => e.event_type === 'trade');

  it('emits canonical events only, a book every interval and some trades', () => {
    for (const event of events) MarketEvent.parse(event);
    expect(books.length).toBe((4 * BLOCK_MS) / jumpy.book_update_interval_ms);
    expect(trades.length).toBeGreaterThan(1000);
    expect(events.every((e) => e.source === 'synthetic' && e.symbol === 'ETH')).toBe(true);
  });

  it('orders by timestamp, a trade before the book of the same ms, and captures after the exchange', () => {
    const misordered = events.filter((b, i) => {
      const a = events[i - 1];
      if (a === undefined) return false;
      return (
        b.timestamp_ms < a.timestamp_ms || (b.timestamp_ms === a.timestamp_ms && a.event_type === 'book')
      );
    });
    expect(misordered).toEqual([]);
    const early = events.filter((e) => e.capture_time_ms - e.timestamp_ms < jumpy.latency_base_ms);
    expect(early).toEqual([]);
  });

  it('never crosses the book: levels on the grids, sorted, consistent touch, mid and spread', () => {
    const tick = jumpy.tick_size;
    const broken = books.filter((b) => {
      const levels = [...b.bids, ...b.asks];
      return !(
        b.bids.length === jumpy.book_depth &&
        b.asks.length === jumpy.book_depth &&
        b.best_bid === b.bids[0]?.price &&
        b.best_ask === b.asks[0]?.price &&
        b.best_ask - b.best_bid >= tick * (1 - 1e-9) &&
        b.bids.every((l, j) => j === 0 || l.price < (b.bids[j - 1]?.price as number)) &&
        b.asks.every((l, j) => j === 0 || l.price > (b.asks[j - 1]?.price as number)) &&
        levels.every((l) => l.size > 0 && onGrid(l.price, tick) && onGrid(l.size, jumpy.lot_size)) &&
        Math.abs(b.mid_price - (b.best_bid + b.best_ask) / 2) < 1e-9 * b.mid_price &&
        Math.abs(b.spread_bps - ((b.best_ask - b.best_bid) / b.mid_price) * 1e4) < 1e-9 &&
        b.spread_bps > 0
      );
    });
    expect(broken).toEqual([]);
  });

  it('prices trades at the touch of the current book, with lot sizes, notional and sequential ids', () => {
    let book: BookSnapshot | undefined;
    const ordinals = new Map<string, number>();
    for (const e of events) {
      if (e.event_type === 'book') {
        book = e;
        continue;
      }
      expect(e.price).toBe(e.side === 'buy' ? book?.best_ask : book?.best_bid);
      expect(e.size).toBeGreaterThan(0);
      expect(onGrid(e.size, jumpy.lot_size)).toBe(true);
      expect(e.notional_usd).toBeCloseTo(e.price * e.size, 8);
      const [, , block, n] = e.trade_id.split('_');
      expect(Number(n)).toBe(ordinals.get(block as string) ?? 0);
      ordinals.set(block as string, Number(n) + 1);
    }
    expect([...ordinals.keys()]).toEqual(['0', '1', '2', '3']);
  });

  it('widens the spread when short-term volatility rises (after a jump)', () => {
    const quiet = { ...jumpy, book_depth: 1, trade_intensity: 0 };
    const hour = [...eventsBetween(quiet, 0, 3_600_000)] as BookSnapshot[];
    const spreads = hour.map((b) => b.spread_bps).sort((x, y) => x - y);
    const median = spreads[Math.floor(spreads.length / 2)] as number;
    let largestMove = 0;
    let spreadAfter = 0;
    for (let i = 1; i < hour.length; i++) {
      const move = Math.abs(Math.log((hour[i]?.mid_price as number) / (hour[i - 1]?.mid_price as number)));
      if (move > largestMove) [largestMove, spreadAfter] = [move, hour[i]?.spread_bps as number];
    }
    expect(largestMove).toBeGreaterThan(0.005); // 100 jumps/day of sd 2 %: about 4 in the hour
    expect(median / jumpy.initial_spread_bps).toBeGreaterThan(0.5);
    expect(median / jumpy.initial_spread_bps).toBeLessThan(2);
    expect(spreadAfter).toBeGreaterThan(3 * median);
  });
});
