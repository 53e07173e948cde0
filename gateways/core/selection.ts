/** What a client asked for: null means "any". */
import { mdFilter } from '../../contracts/subjects.ts';
import type { FeedEvent } from './feed-event.ts';

export type Selection = {
  readonly coins: ReadonlySet<string> | null;
  readonly eventTypes: ReadonlySet<string> | null;
  readonly sources: ReadonlySet<string> | null;
};

export const EVERYTHING: Selection = { coins: null, eventTypes: null, sources: null };

export function matches(sel: Selection, ev: FeedEvent): boolean {
  return (
    (sel.coins === null || sel.coins.has(ev.symbol)) &&
    (sel.eventTypes === null || sel.eventTypes.has(ev.eventType)) &&
    (sel.sources === null || sel.sources.has(ev.source))
  );
}

/** The narrowest JetStream filter subject covering the selection. */
export function filterSubject(sel: Selection): string {
  const list = (s: ReadonlySet<string> | null) => (s ? [...s] : undefined);
  return mdFilter({ sources: list(sel.sources), symbols: list(sel.coins), eventTypes: list(sel.eventTypes) });
}

/** Equal for equal selections (order of values ignored). */
export function selectionKey(sel: Selection): string {
  const part = (s: ReadonlySet<string> | null) => (s ? [...s].sort().join(',') : '*');
  return `${part(sel.coins)};${part(sel.eventTypes)};${part(sel.sources)}`;
}
