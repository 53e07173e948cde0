/**
 * History + live merge (the Centrifugo method), written once for every transport.
 *
 * A client without a position is attached to the live tail at once. A client resuming after
 * sequence N is served, in order, from: a private ordered JetStream consumer while N is older than
 * what the tail's ring covers; then the ring; then, in the same synchronous step that reads the
 * ring's newest event, the live tail. `lastSeq` on the subscriber drops any event seen twice at a
 * handover, and the ring's coverage promise rules out a gap. Both history phases wait for the
 * sink's backpressure, so a slow resuming client costs no memory.
 */
import { STREAMS } from '../../contracts/streams.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { decodeFeedEvent, type FeedEvent } from './feed-event.ts';
import type { LiveTail, TailSubscriber } from './live-tail.ts';
import { filterSubject, matches, type Selection } from './selection.ts';

/** An explicit, non-terminal answer to a position that cannot be resumed exactly. */
export type FeedNotice = {
  code: 'position_not_retained' | 'position_beyond_end';
  message: string;
  requested_last_event_id: number;
  /** The valid position the feed resumes after (use it as Last-Event-ID). */
  resumed_after: number;
  first_seq: number;
  last_seq: number;
};

export type FeedSink = {
  event(ev: FeedEvent): void;
  notice(n: FeedNotice): void;
  feedStale(coin: string, silentMs: number): void;
  feedRecovered(coin: string): void;
  /** Null when the sink can take more now; otherwise settles when it can (or has closed). */
  ready(): Promise<void> | null;
};

export type FeedSubscription = { close(): void };

export type FeedDeps = { nats: Nats; tail: LiveTail; log: Logger };

const RING_CHUNK = 512;

/** How feeds were positioned since start (exported for metrics and tests). */
export const replayStats = { live: 0, fromRing: 0, fromStream: 0, notices: 0 };

/** Positions the feed; resolves once the first phase has started (errors before any event reject). */
export async function openFeed(
  deps: FeedDeps,
  selection: Selection,
  lastEventId: number | null,
  sink: FeedSink,
): Promise<FeedSubscription> {
  const { tail } = deps;
  let closed = false;
  let detach: (() => void) | null = null;
  let reader: OrderedReader | null = null;
  const sub: TailSubscriber = {
    selection,
    lastSeq: 0,
    deliver: (ev) => sink.event(ev),
    feedStale: (coin, ms) => sink.feedStale(coin, ms),
    feedRecovered: (coin) => sink.feedRecovered(coin),
  };
  const close = () => {
    closed = true;
    reader?.stop();
    detach?.();
  };

  if (lastEventId === null) {
    sub.lastSeq = tail.lastSeq;
    detach = tail.attach(sub);
    replayStats.live++;
    return { close };
  }

  let after = await resolvePosition(deps.nats, lastEventId, sink);
  if (after + 1 < tail.coveredFrom) replayStats.fromStream++;
  else replayStats.fromRing++;

  const fromStream = (from: number) =>
    new Promise<number>((resolve) => {
      let reached = from;
      let finished = false;
      const r = readOrdered(
        deps.nats,
        { stream: STREAMS.MD, filter: filterSubject(selection), startSeq: from + 1 },
        (msg) => {
          if (closed || finished) return;
          const ev = decodeFeedEvent(msg);
          if (ev && matches(selection, ev)) sink.event(ev);
          reached = msg.info.streamSequence;
          if (reached + 1 >= tail.coveredFrom) {
            finished = true;
            r.stop();
            resolve(reached);
            return;
          }
          return sink.ready() ?? undefined;
        },
        deps.log,
      );
      reader = r;
      r.done.then(() => resolve(reached));
    });

  const run = async () => {
    while (!closed) {
      if (after + 1 < tail.coveredFrom) {
        after = await fromStream(after);
        continue;
      }
      const { events, reached, atEnd } = tail.ring.after(after, RING_CHUNK);
      for (const ev of events) if (matches(selection, ev)) sink.event(ev);
      after = reached;
      if (atEnd) {
        sub.lastSeq = after;
        detach = tail.attach(sub);
        return;
      }
      const wait = sink.ready();
      if (wait) await wait;
    }
  };
  run().catch((err) => deps.log.error({ err: String(err) }, 'replay failed'));
  return { close };
}

async function resolvePosition(nats: Nats, requested: number, sink: FeedSink): Promise<number> {
  const { first_seq, last_seq } = (await nats.jsm.streams.info(STREAMS.MD)).state;
  const notice = (code: FeedNotice['code'], resumedAfter: number, message: string) => {
    replayStats.notices++;
    sink.notice({
      code,
      message,
      requested_last_event_id: requested,
      resumed_after: resumedAfter,
      first_seq,
      last_seq,
    });
    return resumedAfter;
  };
  if (requested > last_seq) {
    return notice(
      'position_beyond_end',
      last_seq,
      `event ${requested} does not exist yet; resuming after the newest event, ${last_seq}`,
    );
  }
  if (requested + 1 < first_seq) {
    return notice(
      'position_not_retained',
      first_seq - 1,
      `events after ${requested} are no longer retained; resuming from the oldest retained event, ${first_seq}`,
    );
  }
  return requested;
}
