/**
 * The derived series (bars, book snapshots: contracts/derived.ts) as a feed of the core: the
 * `DERIVED` stream read by a live tail of its own, one per NATS connection of the process, started
 * the first time a client asks for a derived kind. Everything else is the core's as for `MD`: the
 * history/live merge, resume by the `DERIVED` sequence (`seq`, Last-Event-ID, `after_seq`,
 * `from_seq`), replay by time, selection filters. A subscription names derived kinds alone
 * (contracts/subscription.ts refuses a mix), so one subscription reads one stream and one sequence.
 * The tail's feed health never reports: a bar series is quiet for as long as its span, and staleness
 * is the market feed's to report (the `MD` tail's, attach-feed.ts).
 */
import { isDerivedKind } from '../../contracts/derived.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { DERIVED_ALL, DERIVED_PREFIX, parseDerivedSubject } from '../../contracts/subjects.ts';
import type { FeedSpec } from './live-tail.ts';
import type { Selection } from './selection.ts';
import { sideTail } from './side-tail.ts';

const one = (values: ReadonlySet<string> | null) => (values && values.size === 1 ? [...values][0] : '*');

export const DERIVED_FEED: FeedSpec = {
  stream: STREAMS.DERIVED,
  filter: DERIVED_ALL,
  historyFilter: (sel) => `${DERIVED_PREFIX}.${one(sel.sources)}.${one(sel.coins)}.${one(sel.eventTypes)}`,
  parse: (subject) => {
    const p = parseDerivedSubject(subject);
    return p && { source: p.source, symbol: p.symbol, eventType: p.kind };
  },
  coinToken: 2,
};

/** Events the derived tail keeps for resumes (bars are few: a day of 1 s bars of one coin is 86,400). */
const DERIVED_RING = 16_384;
/** The process's derived tail on `nats`, started on first use (side-tail.ts). */
export const derivedTail = sideTail(DERIVED_FEED, DERIVED_RING, (tail) => tail);

/** Whether a selection reads the derived series (it names derived kinds only). */
export const isDerivedSelection = (sel: Selection): boolean =>
  sel.eventTypes !== null && sel.eventTypes.size > 0 && [...sel.eventTypes].every(isDerivedKind);
