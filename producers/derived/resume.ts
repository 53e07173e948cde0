/**
 * Where a (re)started derived producer picks up, from what `DERIVED` holds (no state of its own):
 * the last message of each `dv.<source>.<symbol>.<kind>` subject (`last_by_subj`) gives the span
 * last published (the floor: nothing at or before it is published again) and the `MD` sequence
 * to re-read from so that every span after it is rebuilt from all its events: a bar's `first_seq`,
 * a snapshot's `base_seq` (the full book its levels were built on, re-read from there: a diff-fed
 * book re-read from a diff would lack every level the diffs did not name). A platform `MD` subject that feeds a
 * series with nothing published yet (a new coin, the first hour of 1 h bars) is re-read from the
 * first event `MD` retains.
 */
import {
  BAR_KINDS,
  type DerivedEvent,
  type DerivedKind,
  derivedStartMs,
  SNAPSHOT_KIND,
} from '../../contracts/derived.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { DERIVED_ALL, derivedSubject, MD_ALL, parseMdSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';

export type ResumePoint = {
  /** The `MD` sequence to read from. */
  fromSeq: number;
  /** Per DERIVED subject, the start of the last span published. */
  floors: Map<string, number>;
};

async function subjectsOf(nats: Nats, stream: string, filter: string): Promise<string[]> {
  const info = await nats.jsm.streams.info(stream, { subjects_filter: filter });
  return Object.keys(info.state.subjects ?? {});
}

export async function readResumePoint(nats: Nats): Promise<ResumePoint> {
  const floors = new Map<string, number>();
  const mdInfo = await nats.jsm.streams.info(STREAMS.MD);
  const firstMd = Math.max(1, mdInfo.state.first_seq);
  let fromSeq = Number.POSITIVE_INFINITY;
  for (const subject of await subjectsOf(nats, STREAMS.DERIVED, DERIVED_ALL)) {
    const last = await nats.jsm.streams.getMessage(STREAMS.DERIVED, { last_by_subj: subject });
    if (!last) continue;
    const event = last.json<DerivedEvent>();
    floors.set(subject, derivedStartMs(event));
    fromSeq = Math.min(fromSeq, event.event_type === SNAPSHOT_KIND ? event.base_seq : event.first_seq);
  }
  for (const subject of await subjectsOf(nats, STREAMS.MD, MD_ALL)) {
    const parts = parseMdSubject(subject);
    if (!parts) continue;
    const fed: readonly DerivedKind[] =
      parts.eventType === 'trade' ? BAR_KINDS : parts.eventType === 'book' ? [SNAPSHOT_KIND] : [];
    if (fed.some((kind) => !floors.has(derivedSubject(parts.source, parts.symbol, kind)))) fromSeq = firstMd;
  }
  return { fromSeq: Number.isFinite(fromSeq) ? Math.max(fromSeq, firstMd) : firstMd, floors };
}
