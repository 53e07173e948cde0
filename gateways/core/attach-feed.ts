/**
 * The middle of every stream's start, written once (unified SSE, gRPC, disk-sync, `/stream/live`):
 * the subscription's `coin_not_found` warnings into the sink first, then the feed positioned
 * (history + live merge, replay-source.ts), a failure to position it answered as
 * `feed_unavailable` with its cause logged, and the feeds already stale for this selection, which
 * the caller sends once its stream has started (after its own revocation check and registry
 * start, whose order each transport keeps: a stream never reports anything before it is open).
 */
import { ApiError } from '../../contracts/errors.ts';
import type { ReplayCompleteNotice } from '../../contracts/notices.ts';
import type { BufferedSink } from './buffered-sink.ts';
import { derivedTail, isDerivedSelection } from './derived-feed.ts';
import { bothComplete, ownResumePosition, ownSink, ownTail } from './own-feed.ts';
import {
  type FeedDeps,
  type FeedOptions,
  type FeedSink,
  type FeedSubscription,
  openFeed,
} from './replay-source.ts';
import { openWindowFeed } from './replay-window.ts';
import { initialStaleFeeds, type StaleFeed, type Subscribed } from './subscribe.ts';

export type WarnableSink = FeedSink & Pick<BufferedSink, 'warn' | 'finish'>;

export type AttachedFeed = {
  feed: FeedSubscription;
  /** The selection's feeds stale right now, to send once the stream has started. */
  staleFeeds(): StaleFeed[];
};

export async function attachFeed(
  deps: FeedDeps,
  subscribed: Subscribed,
  sink: WarnableSink,
  opts: FeedOptions & {
    /** What is positioned, for the log line of a failure. */
    what: string;
    /** Added to every warning (disk-sync: the subscription id). */
    warningExtra?: Record<string, unknown>;
    /** The `feed_unavailable` message (default: the market data log). */
    unavailable?: string;
    /**
     * A replay by time reached its `to` (replay-window.ts). Default: the `replay_complete` notice,
     * then the stream ends normally (SSE `event: end`, gRPC OK).
     */
    onComplete?: (notice: ReplayCompleteNotice) => void;
    /** The position the stream starts after, once resolved (a replay's `from`), before any event. */
    onPositioned?: (after: number) => void;
    /** With a viewer: the `OWN` position its own events start after, once resolved (own-feed.ts). */
    onOwnPositioned?: (after: number) => void;
  } = { what: 'stream' },
): Promise<AttachedFeed> {
  for (const w of subscribed.warnings) sink.warn(w.code, w.message, { coin: w.coin, ...opts.warningExtra });
  let feed: FeedSubscription;
  try {
    const onComplete =
      opts.onComplete ??
      ((n: ReplayCompleteNotice) => {
        sink.notice(n);
        sink.finish(n);
      });
    // Derived kinds are read from their own stream, by a tail of their own (derived-feed.ts).
    const derived = isDerivedSelection(subscribed.selection);
    const on = derived ? { ...deps, tail: await derivedTail(deps.nats, deps.log) } : deps;
    // A viewer's own events come from `OWN`, beside the platform's `MD` (own-feed.ts).
    const viewer = !derived && deps.tail.feed.withOwnEvents ? subscribed.selection.viewer : null;
    if (viewer) feed = await openWithOwn(deps, viewer, subscribed, sink, { ...opts, onComplete });
    else feed = await openOne(on, subscribed, sink, { ...opts, onComplete });
  } catch (err) {
    deps.log.warn({ err: String(err) }, `cannot position ${opts.what}`);
    throw new ApiError('feed_unavailable', opts.unavailable ?? 'market data log unreachable; retry shortly');
  }
  return { feed, staleFeeds: () => initialStaleFeeds(deps.tail, subscribed.selection) };
}

type OpenOptions = FeedOptions & {
  onComplete: (n: ReplayCompleteNotice) => void;
  onPositioned?: (after: number) => void;
  onOwnPositioned?: (after: number) => void;
};

/** One stream's feed: a replay by time, or a resume (or live start) by position. */
async function openOne(
  deps: FeedDeps,
  subscribed: Subscribed,
  sink: FeedSink,
  opts: OpenOptions,
): Promise<FeedSubscription> {
  const { window } = subscribed;
  if (window) return openWindowFeed(deps, { ...subscribed, window }, sink, opts);
  opts.onPositioned?.(subscribed.lastEventId ?? deps.tail.lastSeq);
  return openFeed(deps, subscribed.selection, subscribed.lastEventId, sink, opts);
}

/** The platform's feed and the viewer's own events, each by its own position, into one sink. */
async function openWithOwn(
  deps: FeedDeps,
  viewer: string,
  subscribed: Subscribed,
  sink: FeedSink,
  opts: OpenOptions,
): Promise<FeedSubscription> {
  const own = { ...deps, tail: await ownTail(deps.nats, deps.log) };
  // A replay by time maps `from` on `OWN` too, unless the client names where its own events stand.
  const byTime =
    subscribed.window !== null && subscribed.lastEventId === null && subscribed.lastOwnSeq === null;
  const ownAfter = byTime
    ? null
    : await ownResumePosition(deps, viewer, subscribed.lastEventId, subscribed.lastOwnSeq);
  const [mdDone, ownDone] = bothComplete(opts.onComplete);
  // The platform's feed first: its position is known (onPositioned) before any own event is framed.
  const mdFeed = await openOne(deps, subscribed, sink, { ...opts, onComplete: mdDone });
  try {
    const ownFeed = await openOne(
      own,
      { ...subscribed, lastEventId: ownAfter, warnings: [] },
      ownSink(sink),
      { onComplete: ownDone, ...(opts.onOwnPositioned ? { onPositioned: opts.onOwnPositioned } : {}) },
    );
    return {
      close() {
        mdFeed.close();
        ownFeed.close();
      },
    };
  } catch (err) {
    mdFeed.close();
    throw err;
  }
}

/** Sends each stale feed as a `feed_stale` warning (silent 0 s: stale since before the stream). */
export function sendStale(sink: Pick<FeedSink, 'feedStale'>, feeds: readonly StaleFeed[]): void {
  for (const f of feeds) sink.feedStale(f.coin, 0, f.source);
}
