/**
 * The per-account subject space and the one visibility rule every transport applies: subjects
 * built and parsed by the contracts, filters that cover a viewer's own events, and selections
 * that deliver an account's events to that account only and never share encoded chunks across
 * accounts.
 */
import { describe, expect, it } from 'vitest';
import {
  accountMdFilter,
  accountMdSubject,
  mdFilter,
  parseFeedSubject,
  parseMdSubject,
} from '../../contracts/subjects.ts';
import type { FeedEvent } from '../../gateways/core/feed-event.ts';
import { EVERYTHING, filterSubject, matches, selectionKey } from '../../gateways/core/selection.ts';
import { visibleTo } from '../../gateways/core/visibility.ts';

const ev = (owner: string | null): FeedEvent => ({
  seq: 1,
  source: 'binance',
  symbol: 'BTCUSDT',
  eventType: 'trade',
  owner,
  json: '{}',
  receivedAtNs: 0,
  wire: {},
});

describe('the per-account subject space', () => {
  it("puts an account's events under its own subjects, outside the platform's four tokens", () => {
    const s = accountMdSubject('acc_A1', 'binance', 'BTCUSDT', 'trade');
    expect(s).toBe('md.binance.BTCUSDT.trade.acc_A1');
    expect(parseMdSubject(s)).toBeNull();
    expect(parseFeedSubject(s)).toEqual({
      source: 'binance',
      symbol: 'BTCUSDT',
      eventType: 'trade',
      owner: 'acc_A1',
    });
    expect(parseFeedSubject('md.binance.BTCUSDT.trade')).toMatchObject({ owner: null });
    expect(parseFeedSubject('md.a.b.c.d.e')).toBeNull();
    expect(accountMdFilter('acc_A1')).toBe('md.*.*.*.acc_A1');
  });

  it('refuses an account id that is not one subject token', () => {
    for (const bad of ['acc.A', 'acc*', 'acc>', '', 'a b'])
      expect(() => accountMdSubject(bad, 'binance', 'BTCUSDT', 'trade')).toThrow(/subject-safe/);
  });

  it("covers a viewer's own subjects with one filter as narrow as the platform's by source and coin", () => {
    expect(mdFilter({ symbols: ['BTC'], eventTypes: ['trade'] })).toBe('md.*.BTC.trade');
    expect(mdFilter({ symbols: ['BTC'], eventTypes: ['trade'] }, true)).toBe('md.*.BTC.>');
    expect(filterSubject({ ...EVERYTHING, sources: new Set(['binance']), viewer: 'acc_A1' })).toBe(
      'md.binance.*.>',
    );
    expect(filterSubject(EVERYTHING)).toBe('md.*.*.*');
  });
});

describe('visibility', () => {
  it("shows the platform's feed to everyone and an account's events to that account only", () => {
    expect(visibleTo(null, null)).toBe(true);
    expect(visibleTo(null, 'acc_A1')).toBe(true);
    expect(visibleTo('acc_A1', 'acc_A1')).toBe(true);
    expect(visibleTo('acc_A1', 'acc_B2')).toBe(false);
    expect(visibleTo('acc_A1', null)).toBe(false);
    expect(visibleTo('acc_A1', undefined)).toBe(false);
    expect(matches({ ...EVERYTHING, viewer: 'acc_A1' }, ev('acc_A1'))).toBe(true);
    expect(matches({ ...EVERYTHING, viewer: 'acc_B2' }, ev('acc_A1'))).toBe(false);
    expect(matches(EVERYTHING, ev('acc_A1'))).toBe(false);
    expect(matches(EVERYTHING, ev(null))).toBe(true);
  });

  it('never lets two accounts share an encoded chunk', () => {
    expect(selectionKey({ ...EVERYTHING, viewer: 'acc_A1' })).not.toBe(
      selectionKey({ ...EVERYTHING, viewer: 'acc_B2' }),
    );
    expect(selectionKey({ ...EVERYTHING, viewer: 'acc_A1' })).not.toBe(selectionKey(EVERYTHING));
  });
});
