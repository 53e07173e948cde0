/**
 * What a client asked for (null means "any") and whose events it may see (`viewer`, from its
 * principal: see `visibility.ts`). `matches` is the one test every phase of every transport applies
 * (live tail, ring, history), so no path delivers an account's events to anyone else.
 */
import { mdFilter } from '../../contracts/subjects.ts';
import type { FeedEvent } from './feed-event.ts';
import { visibleTo } from './visibility.ts';

export type Selection = {
  readonly coins: ReadonlySet<string> | null;
  readonly eventTypes: ReadonlySet<string> | null;
  readonly sources: ReadonlySet<string> | null;
  /** The account whose own events are delivered too; absent or null: the platform's feed only. */
  readonly viewer?: string | null;
};

export const EVERYTHING: Selection = { coins: null, eventTypes: null, sources: null };

export function matches(sel: Selection, ev: FeedEvent): boolean {
  return (
    visibleTo(ev.owner, sel.viewer) &&
    (sel.coins === null || sel.coins.has(ev.symbol)) &&
    (sel.eventTypes === null || sel.eventTypes.has(ev.eventType)) &&
    (sel.sources === null || sel.sources.has(ev.source))
  );
}

/**
 * The narrowest JetStream filter subject covering the selection on `MD`, or with `owner` on that
 * account's own events (`OWN`).
 */
export function filterSubject(sel: Selection, owner?: string): string {
  const list = (s: ReadonlySet<string> | null) => (s ? [...s] : undefined);
  return mdFilter(
    { sources: list(sel.sources), symbols: list(sel.coins), eventTypes: list(sel.eventTypes) },
    owner,
  );
}

/**
 * Equal for equal selections (order of values ignored). Clients with equal keys share encoded
 * chunks, so the viewer is part of it: two accounts never share one.
 */
export function selectionKey(sel: Selection): string {
  const part = (s: ReadonlySet<string> | null) => (s ? [...s].sort().join(',') : '*');
  return `${part(sel.coins)};${part(sel.eventTypes)};${part(sel.sources)};${sel.viewer ?? ''}`;
}

/**
 * The key of a live tail's group (live-tail.ts): equal for equal selections whatever the viewer,
 * since a run holds only platform events, which every viewer sees alike (own events come from
 * `OWN`, one by one). `kind`: the framer, whose frames the run's members share.
 */
export function runKey(kind: string, sel: Selection): string {
  return `${kind}|${selectionKey({ ...sel, viewer: null })}`;
}
