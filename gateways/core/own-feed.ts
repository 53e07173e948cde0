/**
 * An account's own events (`stream: true`, on `OWN`) beside the platform's feed (`MD`), for every
 * stream that has a viewer. Two logs, two sequences: each is read by the core's one history/live
 * merge (replay-source.ts, or replay-window.ts for a replay by time) with its own position, into
 * the one sink, so each is delivered in its own order, exactly once, and the two interleave as
 * they arrive. The stream's position is the pair; a transport shows the second part once an own
 * event has been delivered (SSE id `N:K`, gRPC `after_own_seq`, disk-sync `from_own_seq`), so a
 * stream without own events keeps the one number it always had.
 *
 * A resume that names only the platform's position (no own event was delivered before the cut,
 * or a client that keeps one number) resumes own events after the last one `OWN` stored at or
 * before the platform event it names: the two streams' stored times order them, to the
 * millisecond. A live start begins both at their ends; a replay by time maps `from` on each.
 */
import { type ReplayCompleteNotice, replayComplete } from '../../contracts/notices.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { OWN_ALL, ownAccountFilter, parseFeedSubject } from '../../contracts/subjects.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { seqAtOrBefore } from '../../platform/stream-time.ts';
import { deliverPendingRuns, type FeedSpec, type LiveTail } from './live-tail.ts';
import { LruCache } from './lru-cache.ts';
import type { FeedDeps, FeedSink } from './replay-source.ts';
import { filterSubject } from './selection.ts';
import { sideTail } from './side-tail.ts';

export const OWN_FEED: FeedSpec = {
  stream: STREAMS.OWN,
  filter: OWN_ALL,
  // No platform coin is ever learnt from `OWN`.
  platformFilter: null,
  historyFilter: (sel) => filterSubject(sel, sel.viewer ?? undefined),
  parse: parseFeedSubject,
  coinToken: 3,
};

/** Own events the tail keeps for resumes (few: every account's together, bounded by the publish quota). */
const OWN_RING = 4_096;
/** Accounts this process knows to have no own event (bounded; forgotten when the tail sees one of theirs). */
const NO_OWN_MAX = 100_000;
/** And asked again after this long at most (hygiene: the tail's word is enough). */
const NO_OWN_TTL_MS = 600_000;

type OwnTail = { tail: LiveTail; noOwnEvents: LruCache<string, true> };

const startOwnTail = sideTail(OWN_FEED, OWN_RING, (tail): OwnTail => {
  const noOwnEvents = new LruCache<string, true>(NO_OWN_MAX, NO_OWN_TTL_MS);
  tail.onDispatched = (ev) => {
    if (ev.owner !== null) noOwnEvents.delete(ev.owner);
  };
  return { tail, noOwnEvents };
});

/** The process's `OWN` tail on `nats`, started on first use (a failed start is not kept). */
export async function ownTail(nats: Nats, log: Logger): Promise<LiveTail> {
  return (await startOwnTail(nats, log)).tail;
}

/**
 * Where a viewer's own events resume: after `lastOwnSeq` when the client named it; else after
 * the last own event stored at or before the platform event `mdAfter` (null: live, at `OWN`'s end).
 * An account with no own event at all (the many) resumes at the tail's end with no time lookup:
 * known from one `STREAM.INFO` of its subjects, then remembered until one of its events arrives,
 * so a reconnect storm costs `OWN` nothing.
 */
export async function ownResumePosition(
  deps: FeedDeps,
  viewer: string,
  mdAfter: number | null,
  lastOwnSeq: number | null,
): Promise<number | null> {
  if (lastOwnSeq !== null) return lastOwnSeq;
  const { tail, noOwnEvents } = await startOwnTail(deps.nats, deps.log);
  if (mdAfter === null || tail.lastSeq === 0) return null;
  // Taken before asking: an own event stored after the answer is after this position, so delivered.
  const end = tail.lastSeq;
  if (noOwnEvents.get(viewer)) return end;
  const mine = await deps.nats.jsm.streams.info(STREAMS.OWN, { subjects_filter: ownAccountFilter(viewer) });
  if (Object.keys(mine.state.subjects ?? {}).length === 0) {
    noOwnEvents.set(viewer, true);
    return end;
  }
  const stored = await deps.nats.jsm.streams
    .getMessage(STREAMS.MD, { seq: mdAfter })
    .then((m) => m?.time.getTime() ?? null)
    .catch(() => null);
  // The platform event is gone (not retained, or not yet written): own events go on live.
  if (stored === null) return null;
  return seqAtOrBefore(deps.nats, STREAMS.OWN, stored, deps.log);
}

/** A sink for the own feed: its position notices say they are about `OWN`. */
export function ownSink(sink: FeedSink): FeedSink {
  return {
    // Platform events read before it, still in a run (live-tail.ts), go first.
    event: (ev) => {
      deliverPendingRuns();
      sink.event(ev);
    },
    notice: (n) => sink.notice('first_seq' in n ? { ...n, feed: 'own' as const } : n),
    feedStale: () => {},
    feedRecovered: () => {},
    ready: () => sink.ready(),
  };
}

/**
 * One `replay_complete` for a replay by time read from two streams: sent once both have reached
 * `to`, naming the platform's last sequence and counting every event delivered.
 */
export function bothComplete(
  done: (n: ReplayCompleteNotice) => void,
): [(n: ReplayCompleteNotice) => void, (n: ReplayCompleteNotice) => void] {
  let md: ReplayCompleteNotice | null = null;
  let own: ReplayCompleteNotice | null = null;
  const check = () => {
    if (md && own) done(replayComplete(md.last_seq, md.count + own.count));
  };
  return [
    (n) => {
      md = n;
      check();
    },
    (n) => {
      own = n;
      check();
    },
  ];
}
