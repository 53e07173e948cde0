import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MarketEvent, type Source } from '../../contracts/events.ts';
import { type NormalizeErrorCode, normalizeBatch } from '../../producers/normalizer/index.ts';

type Fixture = {
  id: string;
  kind: string;
  request_symbol: string;
  payload: unknown;
  expected: Record<string, unknown>[];
};
type FixtureFile = { sources: Record<Source, Fixture[]> };

const file = JSON.parse(
  readFileSync(new URL('../../../shared/fixtures/normalize-public.json', import.meta.url), 'utf8'),
) as FixtureFile;

/** When the payloads "arrived": the time of payloads that carry none (fixture `timestamp_ms: null`). */
const RECEIVED_AT_MS = 1_750_000_000_000;

/** Fields of the fixtures' expected records that are helpers, not canonical fields. */
const HELPERS = new Set(['is_snapshot', 'venue_trade_id']);

/**
 * Fixtures whose expected record the canonical contract (contracts/events.ts) cannot hold: the
 * element is rejected with this code instead. Each is also checked below for what it can give.
 */
const NOT_REPRESENTABLE: Record<string, NormalizeErrorCode> = {
  // A diff: zero-size levels, best_bid/best_ask/mid_price/spread_bps null, is_snapshot false.
  'binance-pub-03': 'book_delta',
  // Symbol "@162" does not match the contract's SymbolName; a request symbol can name it.
  'hl-pub-03': 'invalid_value',
};

const close = (actual: number, expected: number): boolean =>
  actual === expected || Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(actual), Math.abs(expected));

/** Asserts `actual` equals the fixture record: numbers to relative 1e-9, `null` times = receive time. */
function expectMatches(actual: MarketEvent, expected: Record<string, unknown>, source: Source): void {
  expect(MarketEvent.safeParse(actual).success).toBe(true);
  expect(actual.source).toBe(source);
  const want: Record<string, unknown> = { ...expected };
  if (want.timestamp_ms === null) want.timestamp_ms = RECEIVED_AT_MS;
  // No capture time in the venue payload: it is the event time.
  if (!('capture_time_ms' in want)) want.capture_time_ms = want.timestamp_ms;
  if (typeof want.venue_trade_id === 'string')
    expect(actual).toMatchObject({ trade_id: `trd_${want.venue_trade_id}` });
  if (want.is_snapshot !== undefined) expect(want.is_snapshot).toBe(actual.event_type === 'book');
  const got = actual as Record<string, unknown>;
  for (const [key, value] of Object.entries(want)) {
    if (HELPERS.has(key)) continue;
    expectClose(got[key], value, key);
  }
}

function expectClose(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(close(actual as number, expected), `${path}: ${actual} vs ${expected}`).toBe(true);
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, `${path}.length`).toBe(expected.length);
    for (const [i, item] of expected.entries()) expectClose((actual as unknown[])[i], item, `${path}[${i}]`);
  } else if (typeof expected === 'object' && expected !== null) {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
  } else {
    expect(actual, path).toEqual(expected);
  }
}

/** As the fixture file says: `{source, symbol: request_symbol, events: [{payload}]}` (`symbol: null` = none). */
const normalizeFixture = (source: Source, fixture: Fixture, symbol: string | null = fixture.request_symbol) =>
  normalizeBatch(
    { source, symbol: symbol ?? undefined, events: [{ payload: fixture.payload }] },
    { receivedAtMs: RECEIVED_AT_MS },
  );

const all = Object.entries(file.sources).flatMap(([source, fixtures]) =>
  fixtures.map((fixture) => ({ source: source as Source, fixture })),
);

describe('normalize: public fixtures', () => {
  it('covers every source of the contract', () => {
    expect(Object.keys(file.sources).sort()).toEqual(['binance', 'cme', 'hyperliquid', 'sgx', 'synthetic']);
  });

  for (const { source, fixture } of all.filter(({ fixture }) => !(fixture.id in NOT_REPRESENTABLE))) {
    it(`${fixture.id} (${source} ${fixture.kind}) gives its expected events`, () => {
      const result = normalizeFixture(source, fixture);
      expect(result.rejected).toEqual([]);
      expect(result.events).toHaveLength(fixture.expected.length);
      for (const [i, event] of result.events.entries())
        expectMatches(event, fixture.expected[i] as Record<string, unknown>, source);
    });

    it(`${fixture.id} gives the same events when the request has no symbol`, () => {
      const withSymbol = normalizeFixture(source, fixture);
      const fromPayload = normalizeFixture(source, fixture, null);
      if (source === 'cme') {
        // Databento records carry only instrument_id: the symbol must come from the request.
        expect(fromPayload.rejected[0]?.error ?? 'none').toBe(
          fixture.expected.length ? 'missing_field' : 'none',
        );
      } else if (fixture.id === 'binance-pub-04') {
        // A REST depth snapshot names no symbol either.
        expect(fromPayload.rejected.map((r) => r.error)).toEqual(['missing_field']);
      } else {
        expect(fromPayload).toEqual(withSymbol);
      }
    });
  }
});

describe('normalize: fixtures the canonical contract cannot hold', () => {
  const byId = new Map(all.map((entry) => [entry.fixture.id, entry]));

  it('rejects each with its documented code and no events', () => {
    for (const [id, code] of Object.entries(NOT_REPRESENTABLE)) {
      const entry = byId.get(id);
      if (entry === undefined) throw new Error(`fixture ${id} is gone: update NOT_REPRESENTABLE`);
      const result = normalizeFixture(entry.source, entry.fixture);
      expect(result.events, id).toEqual([]);
      expect(
        result.rejected.map((r) => [r.index, r.error]),
        id,
      ).toEqual([[0, code]]);
      expect(result.rejected[0]?.message.length).toBeGreaterThan(10);
    }
  });

  it('hl-pub-03 (spot "@162") gives its expected book once a valid request symbol names it', () => {
    const entry = byId.get('hl-pub-03');
    if (entry === undefined) throw new Error('fixture hl-pub-03 is gone');
    const result = normalizeFixture(entry.source, entry.fixture, 'SPOT-162');
    expect(result.rejected).toEqual([]);
    expect(result.events).toHaveLength(1);
    const expected = { ...(entry.fixture.expected[0] as Record<string, unknown>), symbol: 'SPOT-162' };
    expectMatches(result.events[0] as MarketEvent, expected, 'hyperliquid');
  });
});
