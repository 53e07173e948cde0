import { describe, expect, it } from 'vitest';
import { EXCHANGES, Exchange, type Fact, VENUE_DETAILS, venueDetails } from '../../contracts/venues.ts';
import { FUNDING_MODELS } from '../../producers/funding/registry.ts';

const isFact = (x: unknown): x is Fact<unknown> =>
  typeof x === 'object' && x !== null && 'value' in x && 'status' in x && 'source' in x;

/** [dotted path, fact] of every fact under `node`. */
function facts(node: unknown, path: string[] = []): [string, Fact<unknown>][] {
  if (isFact(node)) return [[path.join('.'), node]];
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([k, v]) => facts(v, [...path, k]));
}

const TOP_FACTS = [
  'product',
  'maker_fee',
  'taker_fee',
  'trading_hours',
  'settlement_currency',
  'max_leverage_btc',
  'price_bands',
] as const;
const FUNDING_FACTS = [
  'interval_hours',
  'settlement_times',
  'formula',
  'interest_rate',
  'dampener',
  'cap',
  'premium_input',
  'notional_price',
] as const;
const INSTRUMENT_FACTS = ['tick_size', 'lot_size', 'contract_size', 'min_notional'] as const;

describe('venue details', () => {
  it('lists the six venues of the spec, the same names as the Exchange enum', () => {
    expect(EXCHANGES).toEqual(['binance', 'hyperliquid', 'okx', 'bybit', 'cme', 'sgx']);
    expect(Exchange.options).toEqual([...EXCHANGES]);
    expect(Object.keys(VENUE_DETAILS).sort()).toEqual([...EXCHANGES].sort());
    expect(Object.keys(FUNDING_MODELS).sort()).toEqual([...EXCHANGES].sort());
  });

  it.each(EXCHANGES)('%s has every field, each fact with a status and a source', (exchange) => {
    const v = venueDetails(exchange);
    expect(v?.exchange).toBe(exchange);
    expect(v?.name).toBeTruthy();
    expect(['perpetual', 'dated_future']).toContain(v?.instrument_type);
    for (const key of TOP_FACTS) expect(isFact(v?.[key]), key).toBe(true);
    for (const key of FUNDING_FACTS) expect(isFact(v?.funding[key]), `funding.${key}`).toBe(true);
    expect(typeof v?.funding.has_funding).toBe('boolean');
    for (const base of ['BTC', 'ETH'] as const)
      expect(v?.instruments.some((i) => i.base === base)).toBe(true);
    for (const instrument of v?.instruments ?? []) {
      for (const key of INSTRUMENT_FACTS) expect(isFact(instrument[key]), key).toBe(true);
      expect(['base', 'contracts']).toContain(instrument.lot_unit);
    }
    for (const [path, f] of facts(v)) {
      expect(['verified', 'secondary', 'unverified'], path).toContain(f.status);
      expect(f.source.length, path).toBeGreaterThan(0);
    }
  });

  it('marks unverified items, and lists exactly those paths in `unverified`', () => {
    for (const v of Object.values(VENUE_DETAILS)) {
      const expected = facts(v)
        .filter(([, f]) => f.status === 'unverified')
        .map(([path]) => path);
      expect(v.unverified).toEqual(expected);
    }
    // Items VENUES.md calls unverified or could not find.
    expect(VENUE_DETAILS.binance.unverified).toEqual(
      expect.arrayContaining(['instruments.1.tick_size', 'max_leverage_btc']),
    );
    expect(VENUE_DETAILS.okx.unverified).toEqual(
      expect.arrayContaining(['instruments.1.tick_size', 'max_leverage_btc', 'funding.cap']),
    );
    expect(VENUE_DETAILS.bybit.unverified).toEqual(expect.arrayContaining(['instruments.1.tick_size']));
    expect(VENUE_DETAILS.hyperliquid.unverified).toContain('funding.dampener');
    expect(VENUE_DETAILS.sgx.unverified).toEqual(
      expect.arrayContaining(['funding.interval_hours', 'funding.formula', 'maker_fee', 'taker_fee']),
    );
    expect(VENUE_DETAILS.cme.unverified).toEqual(expect.arrayContaining(['maker_fee', 'taker_fee']));
    expect(VENUE_DETAILS.binance.instruments[0]?.tick_size).toMatchObject({ value: 0.1, status: 'verified' });
  });

  it('carries the §8 facts the funding models use', () => {
    expect(VENUE_DETAILS.hyperliquid.funding.interval_hours.value).toBe(1);
    expect(VENUE_DETAILS.hyperliquid.funding.cap.value).toBe(0.04);
    expect(VENUE_DETAILS.sgx.funding.cap.value).toBe(0.0035);
    expect(VENUE_DETAILS.cme.funding.has_funding).toBe(false);
    expect(VENUE_DETAILS.cme.instrument_type).toBe('dated_future');
    for (const exchange of EXCHANGES) {
      const model = FUNDING_MODELS[exchange];
      const funding = VENUE_DETAILS[exchange].funding;
      expect(model.cap).toBe(funding.cap.value);
      if (funding.has_funding) expect(model.intervalHours).toBe(funding.interval_hours.value);
    }
  });

  it('returns null for unknown names, wrong case and inherited keys', () => {
    for (const name of ['kraken', 'BINANCE', '', 'constructor', '__proto__', 'toString'])
      expect(venueDetails(name)).toBeNull();
  });
});
