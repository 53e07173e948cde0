import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BookEvent, MarketEvent, type Source, TradeEvent } from '../../contracts/events.ts';
import { normalizeBatch } from '../../producers/normalizer/index.ts';

type Fixture = {
  id: string;
  kind: string;
  request_symbol: string;
  payload: unknown;
  expected: Record<string, unknown>[];
};
type FixtureFile = { sources: Record<Source, Fixture[]> };

const file = JSON.parse(
  readFileSync(new URL('../fixtures/normalize-public.json', import.meta.url), 'utf8'),
) as FixtureFile;

/** When the payloads "arrived": the time of payloads that carry none (fixture `timestamp_ms: null`). */
const RECEIVED_AT_MS = 1_750_000_000_000;

/** The fixtures' float tolerance (meta.conventions.tolerance): relative 1e-9. */
const close = (actual: number, expected: number): boolean =>
  actual === expected || Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(actual), Math.abs(expected));

/** Deep comparison: numbers to relative 1e-9, everything else (null, strings, booleans, keys) exact. */
function expectClose(actual: unknown, expected: unknown, path: string): void {
  if (typeof expected === 'number') {
    expect(typeof actual, path).toBe('number');
    expect(close(actual as number, expected), `${path}: ${actual} vs ${expected}`).toBe(true);
  } else if (Array.isArray(expected)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, `${path}.length`).toBe(expected.length);
    for (const [i, item] of expected.entries()) expectClose((actual as unknown[])[i], item, `${path}[${i}]`);
  } else if (typeof expected === 'object' && expected !== null) {
    expect(typeof actual === 'object' && actual !== null, path).toBe(true);
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(expected).sort());
    for (const [key, value] of Object.entries(expected))
      expectClose((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
  } else {
    expect(actual, path).toStrictEqual(expected);
  }
}

/**
 * Asserts `actual` matches the fixture record on EVERY field the record has (venue_trade_id,
 * is_snapshot and nulls included); `timestamp_ms: null` means "the payload has no time: the
 * capture (receive) time". Fields the record leaves out may only be `source`, `capture_time_ms`
 * (then the event time, venues giving no capture time) and, for venue trades, `trade_id` /
 * `venue_trade_id` (then `trade_id` = `trd_` + `venue_trade_id`).
 */
function expectMatches(actual: MarketEvent, expected: Record<string, unknown>, source: Source): void {
  expect(MarketEvent.parse(actual)).toStrictEqual(actual);
  expect(actual.source).toBe(source);
  const got = actual as Record<string, unknown>;
  for (const [key, value] of Object.entries(expected)) {
    expect(Object.hasOwn(got, key), `${key} is missing`).toBe(true);
    if (key === 'timestamp_ms' && value === null) {
      expect(actual.timestamp_ms).toBe(RECEIVED_AT_MS);
      expect(actual.capture_time_ms).toBe(RECEIVED_AT_MS);
    } else {
      expectClose(got[key], value, key);
    }
  }
  const venueTrade = actual.event_type === 'trade' && source !== 'synthetic';
  const allowed = new Set([
    'source',
    'capture_time_ms',
    ...(venueTrade ? ['trade_id', 'venue_trade_id'] : []),
  ]);
  const extra = Object.keys(got).filter((key) => !Object.hasOwn(expected, key));
  expect(extra.filter((key) => !allowed.has(key))).toEqual([]);
  if (!Object.hasOwn(expected, 'capture_time_ms')) expect(actual.capture_time_ms).toBe(actual.timestamp_ms);
  if (venueTrade) {
    expect(typeof got.venue_trade_id).toBe('string');
    expect(got.trade_id).toBe(`trd_${got.venue_trade_id}`);
  }
  if (actual.event_type === 'book' && source !== 'synthetic') expect(typeof got.is_snapshot).toBe('boolean');
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
    expect(all.length).toBeGreaterThanOrEqual(16);
  });

  it('expects only fields the canonical contract has', () => {
    const fields = new Set([...Object.keys(TradeEvent.shape), ...Object.keys(BookEvent.shape)]);
    for (const { fixture } of all)
      for (const record of fixture.expected)
        expect(
          Object.keys(record).filter((key) => !fields.has(key)),
          fixture.id,
        ).toEqual([]);
  });

  for (const { source, fixture } of all) {
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
        expect(fromPayload).toStrictEqual(withSymbol);
      }
    });
  }
});
