/**
 * The subject filter of a history read (replay-source.ts `historyFilter`): a selection that narrows
 * the stream by coin, source or event type is read through its narrowest filter; one that takes
 * every event of the stream is read unfiltered, since a filtered consumer on nats-server 2.9 costs
 * a walk over every stored block after its start before the first event. A viewer's own events
 * (`OWN`) are always read through its account's filter.
 */
import { expect, it } from 'vitest';
import { DERIVED_FEED } from '../../gateways/core/derived-feed.ts';
import { MD_FEED } from '../../gateways/core/live-tail.ts';
import { OWN_FEED } from '../../gateways/core/own-feed.ts';
import { historyFilter } from '../../gateways/core/replay-source.ts';
import { EVERYTHING, type Selection } from '../../gateways/core/selection.ts';

const sel = (over: Partial<Selection>): Selection => ({ ...EVERYTHING, ...over });

it('reads unfiltered when the selection takes every platform event, with or without a viewer', () => {
  expect(historyFilter(MD_FEED, EVERYTHING)).toBe('');
  expect(historyFilter(MD_FEED, sel({ viewer: 'acc_1' }))).toBe('');
});

it('keeps the narrowest filter when the selection names coins, sources or event types', () => {
  expect(historyFilter(MD_FEED, sel({ coins: new Set(['BTC']) }))).toBe('md.*.BTC.*');
  expect(historyFilter(MD_FEED, sel({ coins: new Set(['BTC']), viewer: 'acc_1' }))).toBe('md.*.BTC.*');
  expect(historyFilter(OWN_FEED, sel({ viewer: 'acc_1' }))).toBe('own.acc_1.*.*.*');
  expect(historyFilter(OWN_FEED, sel({ coins: new Set(['BTC']), viewer: 'acc_1' }))).toBe(
    'own.acc_1.*.BTC.*',
  );
  expect(historyFilter(MD_FEED, sel({ sources: new Set(['binance']) }))).toBe('md.binance.*.*');
  expect(historyFilter(MD_FEED, sel({ eventTypes: new Set(['trade']) }))).toBe('md.*.*.trade');
  expect(historyFilter(DERIVED_FEED, sel({ eventTypes: new Set(['bar_1m']) }))).toBe('dv.*.*.bar_1m');
});
