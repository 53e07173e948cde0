import { describe, expect, it } from 'vitest';
import { ApiError } from '../../contracts/errors.ts';
import { mdFilter, mdSubject, parseMdSubject } from '../../contracts/subjects.ts';
import { Subscription } from '../../contracts/subscription.ts';
import { parseSseSubscription } from '../../gateways/core/sse-query.ts';

describe('SSE subscription (query + Last-Event-ID)', () => {
  it('parses filters and positions into the one Subscription contract', () => {
    const sub = parseSseSubscription(
      { coin: 'BTC, ETH,BTC', event_type: 'trade', source: 'synthetic,binance' },
      undefined,
    );
    expect(sub).toEqual({ coins: ['BTC', 'ETH'], event_types: ['trade'], sources: ['synthetic', 'binance'] });
    expect(Subscription.parse(sub)).toEqual(sub);
    expect(parseSseSubscription({ last_event_id: '42' }, undefined).last_event_id).toBe(42);
    expect(parseSseSubscription({ last_event_id: '42' }, '77').last_event_id).toBe(77);
    expect(parseSseSubscription({}, '').last_event_id).toBeUndefined();
    // Unknown parameters (a cache-buster) are ignored, not refused.
    expect(parseSseSubscription({ coin: 'BTC', limit: '5', _: '1732760000' }, undefined)).toEqual({
      coins: ['BTC'],
    });
  });

  it.each([
    [{ coin: 'BTC', event_type: ['trade', 'book'] }, undefined, 'event_type'],
    [{ event_type: 'trade,quote' }, undefined, 'event_type'],
    [{}, '-1', 'Last-Event-ID'],
    [{}, '9007199254740993', 'Last-Event-ID'],
  ])('refuses %j / %s naming %s', (query, header, field) => {
    try {
      parseSseSubscription(query, header);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('invalid_params');
      expect((err as ApiError).details?.field).toBe(field);
    }
  });
});

describe('subjects', () => {
  it('builds and parses md subjects', () => {
    const s = mdSubject('binance', 'BTCUSDT', 'trade');
    expect(s).toBe('md.binance.BTCUSDT.trade');
    expect(parseMdSubject(s)).toEqual({ source: 'binance', symbol: 'BTCUSDT', eventType: 'trade' });
    expect(parseMdSubject('md.x.y')).toBeNull();
    expect(parseMdSubject('sim.a.b.c')).toBeNull();
  });

  it('narrows the filter only where one value is selected', () => {
    expect(mdFilter({ symbols: ['BTC'] })).toBe('md.*.BTC.*');
    expect(mdFilter({ symbols: ['BTC', 'ETH'], eventTypes: ['book'], sources: ['synthetic'] })).toBe(
      'md.synthetic.*.book',
    );
    expect(mdFilter({})).toBe('md.*.*.*');
  });
});
