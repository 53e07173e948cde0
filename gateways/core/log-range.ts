/**
 * Bounded reads of the stored market events, for requests that take a slice of the log and end
 * (JSON-RPC polls and ranges; the endless history + live merge is `replay-source.ts`):
 * - `eventsAfter`: the events after a stream sequence, from the live tail's ring where it covers
 *   them, otherwise from JetStream with a short-lived ordered consumer up to where the ring begins.
 *   `reached` is the last sequence examined, so a caller resuming from it never misses or repeats
 *   an event: every sequence up to `reached` was either returned or did not match.
 * - `eventsStoredBetween`: the events stored within a window of time (JetStream's own timestamps),
 *   in stream order, until the visitor says stop.
 * Both read through `decodeFeedEvent` and keep only what the selection matches (visibility
 * included), and both stop when `signal` aborts. Both read `MD` unless given another feed: an
 * account's own events are read from `OWN` the same way (`OWN_FEED` and the `OWN` tail,
 * own-feed.ts), each stream by its own sequence.
 */
import {
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  type OrderedConsumerOptions,
} from '@nats-io/jetstream';
import type { Nats } from '../../platform/nats.ts';
import { decodeFeedEvent, type FeedEvent } from './feed-event.ts';
import { type FeedSpec, type LiveTail, MD_FEED } from './live-tail.ts';
import { filterSubject, matches, type Selection } from './selection.ts';

export type LogRangeDeps = { nats: Nats; tail: LiveTail };

/** Events examined from the ring per step. */
const RING_CHUNK = 4_096;
const PULL_BATCH = 1_000;

/** Up to `limit` matching events after `afterSeq`, oldest first, and the last sequence examined. */
export async function eventsAfter(
  deps: LogRangeDeps,
  selection: Selection,
  afterSeq: number,
  limit: number,
  signal: AbortSignal,
  feed: Pick<FeedSpec, 'stream' | 'historyFilter' | 'parse'> = MD_FEED,
): Promise<{ events: FeedEvent[]; reached: number }> {
  const { tail } = deps;
  const events: FeedEvent[] = [];
  let after = afterSeq;
  while (events.length < limit && after < tail.lastSeq) {
    signal.throwIfAborted();
    if (after + 1 < tail.coveredFrom) {
      after = await fromStream(
        deps.nats,
        feed,
        selection,
        after,
        tail.coveredFrom - 1,
        limit - events.length,
        events,
        signal,
      );
      continue;
    }
    const chunk = tail.ring.after(after, RING_CHUNK);
    if (chunk.events.length === 0) break;
    for (const ev of chunk.events) {
      after = ev.seq;
      if (matches(selection, ev) && events.push(ev) >= limit) break;
    }
  }
  return { events, reached: after };
}

/**
 * Matching events stored in `(after, bound]`, appended to `into` (at most `room`); returns the last
 * sequence examined: `bound` when the stream holds nothing more that matches.
 */
async function fromStream(
  nats: Nats,
  feed: Pick<FeedSpec, 'stream' | 'historyFilter' | 'parse'>,
  selection: Selection,
  after: number,
  bound: number,
  room: number,
  into: FeedEvent[],
  signal: AbortSignal,
): Promise<number> {
  let reached = bound;
  let added = 0;
  await visitStored(
    nats,
    feed.stream,
    {
      filter_subjects: (feed.historyFilter ?? filterSubject)(selection),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: after + 1,
    },
    (msg) => {
      const seq = msg.info.streamSequence;
      if (seq > bound) return false;
      const ev = decodeFeedEvent(msg, seq, undefined, feed.parse);
      if (ev && matches(selection, ev)) {
        into.push(ev);
        if (++added >= room) {
          reached = seq;
          return false;
        }
      }
      return true;
    },
    signal,
  );
  return reached;
}

/**
 * Visits, in stream order, the matching events stored from `fromMs` until one stored after `toMs`
 * (store time, Unix ms, given to `visit` beside the event), or until `visit` returns false.
 */
export async function eventsStoredBetween(
  nats: Nats,
  selection: Selection,
  fromMs: number,
  toMs: number,
  visit: (ev: FeedEvent, storedMs: number) => boolean,
  signal: AbortSignal,
  feed: Pick<FeedSpec, 'stream' | 'historyFilter' | 'parse'> = MD_FEED,
): Promise<void> {
  await visitStored(
    nats,
    feed.stream,
    {
      filter_subjects: (feed.historyFilter ?? filterSubject)(selection),
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: new Date(fromMs).toISOString(),
    },
    (msg) => {
      const storedMs = Math.floor(msg.info.timestampNanos / 1e6);
      if (msg.info.timestampNanos / 1e6 > toMs) return false;
      const ev = decodeFeedEvent(msg, msg.info.streamSequence, undefined, feed.parse);
      return ev && matches(selection, ev) ? visit(ev, storedMs) : true;
    },
    signal,
  );
}

/**
 * One ordered consumer over `stream` from the given position; `onMessage` returns false to stop.
 * Ends by itself when no more stored message matches (a consumer with nothing pending is never read).
 */
async function visitStored(
  nats: Nats,
  stream: string,
  opts: Partial<OrderedConsumerOptions>,
  onMessage: (msg: JsMsg) => boolean,
  signal: AbortSignal,
): Promise<void> {
  signal.throwIfAborted();
  const consumer = await nats.js.consumers.get(stream, opts);
  if ((await consumer.info()).num_pending === 0) return;
  signal.throwIfAborted();
  const messages: ConsumerMessages = await consumer.consume({ max_messages: PULL_BATCH });
  const stop = () => messages.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    for await (const msg of messages) {
      if (!onMessage(msg) || msg.info.pending === 0) break;
    }
  } finally {
    signal.removeEventListener('abort', stop);
    messages.stop();
  }
  signal.throwIfAborted();
}
