/**
 * The per-account subject space and the one visibility rule every transport applies: subjects
 * built and parsed by the contracts (an account's own events on `OWN`, never on `MD`'s
 * `md.*.*.*`), filters for a viewer's own events, the SSE id that carries both positions, and
 * selections that deliver an account's events to that account only and never share encoded
 * chunks across accounts.
 */
import { describe, expect, it } from 'vitest';
import {
  isOwnSubject,
  MD_ALL,
  mdFilter,
  ownAccountFilter,
  ownSubject,
  parseFeedSubject,
  parseMdSubject,
} from '../../contracts/subjects.ts';
import { FeedPositionText, Subscription } from '../../contracts/subscription.ts';
import type { FeedEvent } from '../../gateways/core/feed-event.ts';
import { EVERYTHING, filterSubject, matches, selectionKey } from '../../gateways/core/selection.ts';
import { sseFramer } from '../../gateways/core/sse-connection.ts';
import { visibleTo } from '../../gateways/core/visibility.ts';

const ev = (owner: string | null, seq = 1): FeedEvent => ({
  seq,
  source: 'binance',
  symbol: 'BTCUSDT',
  eventType: 'trade',
  owner,
  json: '{}',
  receivedAtNs: 0,
  wire: {},
});

describe('the per-account subject space', () => {
  it("puts an account's events under its own subjects on OWN, outside MD's four tokens", () => {
    const s = ownSubject('acc_A1', 'binance', 'BTCUSDT', 'trade');
    expect(s).toBe('own.acc_A1.binance.BTCUSDT.trade');
    expect(isOwnSubject(s)).toBe(true);
    expect(isOwnSubject('md.binance.BTCUSDT.trade')).toBe(false);
    expect(parseMdSubject(s)).toBeNull();
    expect(parseFeedSubject(s)).toEqual({
      source: 'binance',
      symbol: 'BTCUSDT',
      eventType: 'trade',
      owner: 'acc_A1',
    });
    expect(parseFeedSubject('md.binance.BTCUSDT.trade')).toMatchObject({ owner: null });
    expect(parseFeedSubject('md.binance.BTCUSDT.trade.acc_A1')).toBeNull();
    expect(parseFeedSubject('own..binance.BTCUSDT.trade')).toBeNull();
    expect(ownAccountFilter('acc_A1')).toBe('own.acc_A1.>');
    expect(MD_ALL).toBe('md.*.*.*');
  });

  it('refuses an account id that is not one subject token', () => {
    for (const bad of ['acc.A', 'acc*', 'acc>', '', 'a b'])
      expect(() => ownSubject(bad, 'binance', 'BTCUSDT', 'trade')).toThrow(/subject-safe/);
  });

  it("reads a viewer's own events with one filter as narrow as the platform's", () => {
    expect(mdFilter({ symbols: ['BTC'], eventTypes: ['trade'] })).toBe('md.*.BTC.trade');
    expect(mdFilter({ symbols: ['BTC'], eventTypes: ['trade'] }, 'acc_A1')).toBe('own.acc_A1.*.BTC.trade');
    expect(filterSubject({ ...EVERYTHING, sources: new Set(['binance']), viewer: 'acc_A1' })).toBe(
      'md.binance.*.*',
    );
    expect(filterSubject({ ...EVERYTHING, sources: new Set(['binance']) }, 'acc_A1')).toBe(
      'own.acc_A1.binance.*.*',
    );
    expect(filterSubject(EVERYTHING)).toBe('md.*.*.*');
  });
});

describe('the position of a stream with own events', () => {
  it('reads an SSE id as N or N:K, and refuses anything else', () => {
    expect(FeedPositionText.parse('42')).toEqual({ last_event_id: 42 });
    expect(FeedPositionText.parse('42:7')).toEqual({ last_event_id: 42, last_own_seq: 7 });
    for (const bad of ['42:', ':7', '4.2', '42:7:1', '-1', 'x'])
      expect(FeedPositionText.safeParse(bad).success).toBe(false);
    expect(Subscription.safeParse({ last_own_seq: 3 }).success).toBe(true);
    expect(Subscription.safeParse({ last_own_seq: -1 }).success).toBe(false);
    expect(Subscription.safeParse({ last_event_id: 1, last_own_seq: 3 }).success).toBe(true);
  });

  it('frames one shared id until an own event, then N:K for this client alone', () => {
    const pos = { md: 10, own: null as number | null };
    const framer = sseFramer('req', 1000, pos);
    const platform = ev(null, 11);
    expect(framer.event(platform)).toBe('id: 11\ndata: {}\n\n');
    expect(platform.wire.sse).toBe('id: 11\ndata: {}\n\n');
    expect(framer.personal?.()).toBe(false);
    expect(framer.event(ev('acc_A1', 3))).toBe('id: 11:3\ndata: {}\n\n');
    const later = ev(null, 12);
    expect(framer.event(later)).toBe('id: 12:3\ndata: {}\n\n');
    expect(later.wire.sse).toBeUndefined(); // never memoised for others
    expect(framer.personal?.()).toBe(true);
    expect(pos).toEqual({ md: 12, own: 3 });
    // A client without a viewer: ids are the event's sequence, shared.
    expect(sseFramer('req', 1000).event(ev(null, 13))).toBe('id: 13\ndata: {}\n\n');
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
