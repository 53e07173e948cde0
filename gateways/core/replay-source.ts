/**
 * History + live merge (the Centrifugo method), written once for every transport and every stream:
 * the reading around the merge's pure decisions (resume-merge.ts).
 *
 * A client without a position is attached to the live tail at once. A client resuming after
 * sequence N is served, in order, from: a private ordered JetStream consumer on the tail's stream
 * while N is older than what the tail's ring covers; then the ring; then, in the same synchronous
 * step that reads the ring's newest event, the live tail. `lastSeq` on the subscriber drops any
 * event seen twice at a handover, and the ring's coverage promise rules out a gap. Both history
 * phases wait for the sink's backpressure, so a slow resuming client costs no memory. A filtered
 * history read is given matching messages only: when none is left before the ring, it learns so
 * from the stream (history-end.ts) instead of waiting for the next matching event to be stored.
 *
 * `replayRange` is the history phase alone, for a finite stream (a cache's events): from a
 * position to a last sequence, then done.
 */
import type { FeedRecoveredNotice, Notice } from '../../contracts/notices.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { decodeFeedEvent, type FeedEvent, type SubjectParser } from './feed-event.ts';
import { watchHistoryEnd } from './history-end.ts';
import type { FeedSpec, LiveTail, TailSubscriber } from './live-tail.ts';
import { regionLag } from './region-lag.ts';
import { resumeAt, sourceAfter, takeRing } from './resume-merge.ts';
import { matches, type Selection } from './selection.ts';
import type { RunShare } from './sink-parts.ts';

/** An explicit, non-terminal answer to a position that cannot be resumed exactly. */
export type FeedNotice = Exclude<Notice, FeedRecoveredNotice>;

export type FeedSink = {
  event(ev: FeedEvent): void;
  notice(n: FeedNotice): void;
  feedStale(coin: string, silentMs: number, source?: string): void;
  feedRecovered(coin: string, source?: string): void;
  /** Null when the sink can take more now; otherwise settles when it can (or has closed). */
  ready(): Promise<void> | null;
  /** The live tail's group whose runs this sink can take (BufferedSink `run`), if any. */
  readonly runGroup?: string | undefined;
  run?(evs: readonly FeedEvent[], group: string, shared: RunShare): boolean;
};

export type FeedSubscription = {
  close(): void;
  /**
   * Ends the feed at `seq` (a replay's `to`, known now or later): nothing after it is delivered,
   * and `reached` runs once every event up to it has been (then the feed is closed).
   */
  endAt?(seq: number, reached: () => void): void;
};

export type FeedDeps = { nats: Nats; tail: LiveTail; log: Logger };

const RING_CHUNK = 512;
/** How often a live feed with an end checks whether the tail has passed it (its events are all offered). */
const END_POLL_MS = 50;

/** How feeds were positioned since start (exported for metrics and tests). */
export const replayStats = { live: 0, fromRing: 0, fromStream: 0, notices: 0 };

/** Where a history read comes from; `filter` '' reads every message of the stream. */
export type HistorySpec = { stream: string; filter: string; parse: SubjectParser };

/**
 * The subject filter of a history read: the selection's narrowest when it narrows the stream by
 * coin, source or event type; none ('') when it would only set accounts' own subjects apart, which
 * the in-process match does anyway. nats-server 2.9 counts a filtered consumer's pending messages
 * at its creation by walking every stored block after its start (measured on a million events:
 * 2–27 ms, against under 1 ms unfiltered), and a resume waits for that before its first event.
 */
export function historyFilter(feed: FeedSpec, selection: Selection): string {
  const filter = feed.historyFilter ? feed.historyFilter(selection) : feed.filter;
  // Every token past the stream's prefix a wildcard: it narrows nothing but the token count.
  return filter.split('.').every((t, i) => i === 0 || t === '*' || t === '>') ? '' : filter;
}

/**
 * When a history read stops: `stopped()` (the client left), or its goal (a sequence) is reached.
 * Nothing past `limit()` (a replay's end) is delivered.
 */
type HistoryEnd = { stopped: () => boolean; goal: () => number; limit?: () => number };

/**
 * Reads `spec` in order from `after + 1`, delivering the events that match `selection`, until the
 * client leaves or the goal is reached: by a message read at or past it, or, when the reader's
 * filter leaves nothing to read before it, by the stream's word (history-end.ts). Resolves with the
 * last sequence read or reached; no event at or below it is delivered afterwards. Waits for the
 * sink's backpressure between messages.
 */
function readHistory(
  nats: Nats,
  log: Logger,
  spec: HistorySpec,
  after: number,
  selection: Selection,
  sink: Pick<FeedSink, 'event' | 'ready'>,
  end: HistoryEnd,
  onReader: (r: OrderedReader) => void,
): Promise<number> {
  return new Promise<number>((resolve) => {
    let reached = after;
    let finished = false;
    const finish = (seq: number) => {
      if (finished) return;
      finished = true;
      watch.stop();
      r.stop();
      resolve(seq);
    };
    const watch = watchHistoryEnd(nats, log, {
      stream: spec.stream,
      filter: spec.filter || '>',
      position: () => reached,
      goal: end.goal,
      reached: (goal) => finish(goal),
    });
    const r = readOrdered(
      nats,
      { stream: spec.stream, filter: spec.filter, startSeq: after + 1, paced: true },
      (msg, seq) => {
        if (finished) return;
        if (end.limit && seq > end.limit()) {
          finish(seq - 1);
          return;
        }
        const ev = decodeFeedEvent(msg, seq, undefined, spec.parse);
        if (ev && matches(selection, ev)) sink.event(ev);
        reached = seq;
        watch.delivered();
        if (end.stopped() || reached >= end.goal()) {
          finish(reached);
          return;
        }
        return sink.ready() ?? undefined;
      },
      log,
    );
    onReader(r);
    r.done.then(() => {
      watch.stop();
      resolve(reached);
    });
  });
}

/** `onLive` runs when the feed attaches to the live tail (history replayed), with the last sequence delivered. */
export type FeedOptions = {
  onLive?: (lastSeq: number) => void;
  /** The position was just checked against the stream's bounds (a replay by time): not asked again. */
  checked?: boolean;
};

/** Positions the feed; resolves once the first phase has started (errors before any event reject). */
export async function openFeed(
  deps: FeedDeps,
  selection: Selection,
  lastEventId: number | null,
  sink: FeedSink,
  options: FeedOptions = {},
): Promise<FeedSubscription> {
  const { tail } = deps;
  let closed = false;
  let detach: (() => void) | null = null;
  let reader: OrderedReader | null = null;
  /** A replay's last sequence (Infinity: none), and what runs once it is reached. */
  let endSeq = Number.POSITIVE_INFINITY;
  let onEnd: (() => void) | null = null;
  let endPoll: NodeJS.Timeout | null = null;
  const sub: TailSubscriber = {
    selection,
    lastSeq: 0,
    // A feed without an end (every live client) delivers as it is handed events; `endAt` puts
    // the end check in front, so the fan-out's hot path pays for it only on replays with a `to`.
    deliver: (ev) => sink.event(ev),
    // A live run shared by the sink's group (live-tail.ts) goes in as one frame while the feed has
    // no end and the run is all new; else the tail offers its events one by one, through `deliver`.
    deliverRun: (evs, group, shared) => {
      if (endSeq !== Number.POSITIVE_INFINITY || (evs[0] as FeedEvent).seq <= sub.lastSeq) return false;
      if (!sink.run?.(evs, group, shared)) return false;
      sub.lastSeq = (evs[evs.length - 1] as FeedEvent).seq;
      return true;
    },
    feedStale: (coin, ms, source) => sink.feedStale(coin, ms, source),
    feedRecovered: (coin, source) => sink.feedRecovered(coin, source),
  };
  const close = () => {
    closed = true;
    reader?.stop();
    detach?.();
    if (endPoll) clearInterval(endPoll);
  };
  const reachEnd = () => {
    if (closed) return;
    close();
    onEnd?.();
  };
  /** Live past the end: every event up to the tail's newest has been offered to this feed. */
  const watchLiveEnd = () => {
    if (!detach || endPoll || closed || endSeq === Number.POSITIVE_INFINITY) return;
    const check = () => {
      tail.deliverPending(); // what the tail has read, this feed has been offered
      if (tail.lastSeq >= endSeq) reachEnd();
    };
    endPoll = setInterval(check, END_POLL_MS);
    check();
  };
  const endAt = (seq: number, reached: () => void) => {
    endSeq = seq;
    onEnd = reached;
    sub.deliver = (ev) => {
      if (ev.seq > seq) return reachEnd();
      sink.event(ev);
      if (ev.seq === seq) reachEnd();
    };
    if (sub.lastSeq >= seq && detach) reachEnd();
    else watchLiveEnd();
  };

  const goLive = (after: number) => {
    if (after >= endSeq) return reachEnd();
    sub.lastSeq = after;
    sub.group = sink.runGroup;
    detach = tail.attach(sub);
    options.onLive?.(after);
    watchLiveEnd();
  };

  if (lastEventId === null) {
    goLive(tail.lastSeq);
    replayStats.live++;
    return { close, endAt };
  }

  const feed = tail.feed;
  let after = options.checked
    ? lastEventId
    : await resolvePosition(deps.nats, feed.stream, lastEventId, sink);
  if (sourceAfter(after, tail.coveredFrom).from === 'history') replayStats.fromStream++;
  else replayStats.fromRing++;
  const history: HistorySpec = {
    stream: feed.stream,
    filter: historyFilter(feed, selection),
    parse: feed.parse,
  };
  const guarded = { event: (ev: FeedEvent) => !closed && sink.event(ev), ready: () => sink.ready() };

  const run = async () => {
    while (!closed) {
      const source = sourceAfter(after, tail.coveredFrom);
      if (source.from === 'history') {
        after = await readHistory(
          deps.nats,
          deps.log,
          history,
          after,
          selection,
          guarded,
          // The ring holds every event from coveredFrom on: history is wanted up to just before.
          {
            stopped: () => closed,
            goal: () => Math.min(tail.coveredFrom - 1, endSeq),
            limit: () => endSeq,
          },
          (r) => {
            reader = r;
          },
        );
        if (after >= endSeq) return reachEnd();
        continue;
      }
      const took = takeRing(after, tail.ring.after(after, RING_CHUNK), selection);
      for (const ev of took.deliver) {
        if (ev.seq > endSeq) return reachEnd();
        sink.event(ev);
      }
      after = took.after;
      if (after >= endSeq) return reachEnd();
      if (took.live) {
        goLive(after);
        return;
      }
      const wait = sink.ready();
      if (wait) await wait;
    }
  };
  run().catch((err) => deps.log.error({ err: String(err) }, 'replay failed'));
  return { close, endAt };
}

/**
 * Replays a finite range of `spec` (sequences after `range.after`, up to `range.lastSeq`) that
 * match `selection` into the sink.
 * Resolves with the last sequence delivered or skipped, when the range is done or `signal` aborts.
 */
export async function replayRange(
  deps: Pick<FeedDeps, 'nats' | 'log'>,
  spec: HistorySpec,
  selection: Selection,
  range: { after: number; lastSeq: number },
  sink: Pick<FeedSink, 'event' | 'ready'>,
  signal: AbortSignal,
): Promise<number> {
  const { after, lastSeq } = range;
  if (after >= lastSeq || signal.aborted) return after;
  let reader: OrderedReader | null = null;
  const stop = () => reader?.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await readHistory(
      deps.nats,
      deps.log,
      spec,
      after,
      selection,
      { event: (ev) => !signal.aborted && sink.event(ev), ready: () => sink.ready() },
      { stopped: () => signal.aborted, goal: () => lastSeq },
      (r) => {
        reader = r;
      },
    );
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

async function resolvePosition(
  nats: Nats,
  stream: string,
  requested: number,
  sink: FeedSink,
): Promise<number> {
  const state = (await nats.jsm.streams.info(stream)).state;
  const resumed = resumeAt(requested, state);
  const { after, notice } =
    resumed.notice?.code === 'position_beyond_end' && nats.home
      ? await regionLag(nats.home.jsm, stream, requested, state, resumed)
      : resumed;
  if (notice) {
    replayStats.notices++;
    sink.notice(notice);
  }
  return after;
}
