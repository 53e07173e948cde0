/**
 * The subject filter of a history read (replay-source.ts `historyFilter`): a selection that narrows
 * the stream by coin, source or event type is read through its narrowest filter; one that would
 * only set accounts' own subjects apart (every platform event, or everything a viewer may see) is
 * read unfiltered, since a filtered consumer on nats-server 2.9 costs a walk over every stored block
 * after its start before the first event (the in-process match drops other accounts' events).
 */
import { expect, it } from 'vitest';
import { DERIVED_FEED } from '../../gateways/core/derived-feed.ts';
import { MD_FEED } from '../../gateways/core/live-tail.ts';
import { historyFilter } from '../../gateways/core/replay-source.ts';
import { EVERYTHING, type Selection } from '../../gateways/core/selection.ts';

const sel = (over: Partial<Selection>): Selection => ({ ...EVERYTHING, ...over });

it('reads unfiltered when the selection takes every platform event, with or without a viewer', () => {
  expect(historyFilter(MD_FEED, EVERYTHING)).toBe('');
  expect(historyFilter(MD_FEED, sel({ viewer: 'acc_1' }))).toBe('');
});

it('keeps the narrowest filter when the selection names coins, sources or event types', () => {
  expect(historyFilter(MD_FEED, sel({ coins: new Set(['BTC']) }))).toBe('md.*.BTC.*');
  expect(historyFilter(MD_FEED, sel({ coins: new Set(['BTC']), viewer: 'acc_1' }))).toBe('md.*.BTC.>');
  expect(historyFilter(MD_FEED, sel({ sources: new Set(['binance']) }))).toBe('md.binance.*.*');
  expect(historyFilter(MD_FEED, sel({ eventTypes: new Set(['trade']) }))).toBe('md.*.*.trade');
  expect(historyFilter(DERIVED_FEED, sel({ eventTypes: new Set(['bar_1m']) }))).toBe('dv.*.*.bar_1m');
});
