/**
 * The history/live merge of a resume as pure decisions, apart from the reading around them
 * (replay-source.ts does the I/O). Centrifuge's MergePublications is the model: positions are
 * stream sequences; each phase hands the next one the last sequence it delivered or passed, and an
 * event at or below that is never delivered again, so the three sources (the stream's history,
 * the tail's ring, the live tail) join with no gap and no duplicate.
 * - `resumeAt`: where a requested position resumes, with the notice owed when it cannot be exact.
 * - `sourceAfter`: where the events after a position come from: the stream up to just before the
 *   ring's coverage, or the ring, which holds every event from `coveredFrom` on.
 * - `takeRing`: what one read of the ring delivers, the position after it, and whether the feed
 *   attaches to the live tail next (the ring's newest event was read in the same step).
 */
import type { PositionNotice, RegionLagNotice } from '../../contracts/notices.ts';
import type { FeedEvent } from './feed-event.ts';
import { matches, type Selection } from './selection.ts';

export type StreamBounds = { first_seq: number; last_seq: number };

export type Resumed = { after: number; notice: PositionNotice | RegionLagNotice | null };

export function resumeAt(requested: number, { first_seq, last_seq }: StreamBounds): Resumed {
  const notice = (code: PositionNotice['code'], after: number, message: string): Resumed => ({
    after,
    notice: {
      code,
      message,
      requested_last_event_id: requested,
      resumed_after: after,
      first_seq,
      last_seq,
    },
  });
  if (requested > last_seq)
    return notice(
      'position_beyond_end',
      last_seq,
      `event ${requested} does not exist yet; resuming after the newest event, ${last_seq}`,
    );
  if (requested + 1 < first_seq)
    return notice(
      'position_not_retained',
      first_seq - 1,
      `events after ${requested} are no longer retained; resuming from the oldest retained event, ${first_seq}`,
    );
  return { after: requested, notice: null };
}

export type Source = { from: 'history'; goal: number } | { from: 'ring' };

export function sourceAfter(after: number, coveredFrom: number): Source {
  return after + 1 < coveredFrom ? { from: 'history', goal: coveredFrom - 1 } : { from: 'ring' };
}

export type RingRead = { events: readonly FeedEvent[]; reached: number; atEnd: boolean };

export function takeRing(
  after: number,
  read: RingRead,
  selection: Selection,
): { deliver: FeedEvent[]; after: number; live: boolean } {
  const deliver = read.events.filter((ev) => ev.seq > after && matches(selection, ev));
  return { deliver, after: Math.max(after, read.reached), live: read.atEnd };
}
