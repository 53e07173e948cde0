import { describe, expect, it } from 'vitest';
import { normalizeBatch } from '../../producers/normalizer/index.ts';
import { parseMarketModelConfig } from '../../producers/simulator/config.ts';
import { simulateBlock } from '../../producers/simulator/market.ts';

const simulated = simulateBlock(parseMarketModelConfig({ symbol: 'BTC' }), 0);
const asPayloads = () => simulated.map((event) => ({ payload: structuredClone(event) }));

describe('normalize: synthetic round trip', () => {
  it('gives the simulator its own events back, bit for bit and in order', () => {
    expect(simulated.some((e) => e.event_type === 'trade')).toBe(true);
    expect(simulated.some((e) => e.event_type === 'book')).toBe(true);
    const { events, rejected } = normalizeBatch({ source: 'synthetic', events: asPayloads() });
    expect(rejected).toEqual([]);
    expect(events).toStrictEqual(simulated);
  });

  it('gives the same with the request symbol set to the events’ own', () => {
    const { events, rejected } = normalizeBatch({ source: 'synthetic', symbol: 'BTC', events: asPayloads() });
    expect(rejected).toEqual([]);
    expect(events).toStrictEqual(simulated);
  });

  it('keeps is_snapshot and venue_trade_id when given and never adds them', () => {
    const marked = simulated.map((event) =>
      event.event_type === 'book' ? { ...event, is_snapshot: true } : { ...event, venue_trade_id: 'v7' },
    );
    const { events, rejected } = normalizeBatch({
      source: 'synthetic',
      events: marked.map((event) => ({ payload: structuredClone(event) })),
    });
    expect(rejected).toEqual([]);
    expect(events).toStrictEqual(marked);
    const plain = normalizeBatch({ source: 'synthetic', events: asPayloads() }).events;
    for (const event of plain)
      expect(Object.keys(event)).not.toContain(
        event.event_type === 'book' ? 'is_snapshot' : 'venue_trade_id',
      );
  });

  it('fills in left-out derived fields and replaces inconsistent ones by the recomputed values', () => {
    const trade = simulated.find((e) => e.event_type === 'trade');
    const book = simulated.find((e) => e.event_type === 'book');
    if (trade?.event_type !== 'trade' || book?.event_type !== 'book') throw new Error('no trade or book');
    const { notional_usd: _n, source: _s, ...bareTrade } = trade;
    const { best_bid: _b, best_ask: _a, mid_price: _m, spread_bps: _sp, ...bareBook } = book;
    const wrongBook = { ...book, mid_price: (book.mid_price as number) * 2, best_bid: 1 };
    const { events, rejected } = normalizeBatch({
      source: 'synthetic',
      events: [{ payload: bareTrade }, { payload: bareBook }, { payload: wrongBook }],
    });
    expect(rejected).toEqual([]);
    const [t, b, w] = events;
    expect(t).toMatchObject({
      source: 'synthetic',
      notional_usd: expect.closeTo(trade.price * trade.size, 6),
    });
    for (const got of [b, w]) {
      expect(got).toMatchObject({ best_bid: book.best_bid, best_ask: book.best_ask });
      if (got?.event_type !== 'book') throw new Error('not a book');
      const [gm, bm, gs, bs] = [got.mid_price, book.mid_price, got.spread_bps, book.spread_bps] as number[];
      expect(Math.abs((gm as number) - (bm as number))).toBeLessThan(1e-9 * (bm as number));
      expect(Math.abs((gs as number) - (bs as number))).toBeLessThan(1e-9);
    }
  });
});
