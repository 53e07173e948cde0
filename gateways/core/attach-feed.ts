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
  } = { what: 'stream' },
): Promise<AttachedFeed> {
  for (const w of subscribed.warnings) sink.warn(w.code, w.message, { coin: w.coin, ...opts.warningExtra });
  let feed: FeedSubscription;
  try {
    const { window } = subscribed;
    const onComplete =
      opts.onComplete ??
      ((n: ReplayCompleteNotice) => {
        sink.notice(n);
        sink.finish(n);
      });
    // Derived kinds are read from their own stream, by a tail of their own (derived-feed.ts).
    const on = isDerivedSelection(subscribed.selection)
      ? { ...deps, tail: await derivedTail(deps.nats, deps.log) }
      : deps;
    if (window) feed = await openWindowFeed(on, { ...subscribed, window }, sink, { ...opts, onComplete });
    else {
      opts.onPositioned?.(subscribed.lastEventId ?? on.tail.lastSeq);
      feed = await openFeed(on, subscribed.selection, subscribed.lastEventId, sink, opts);
    }
  } catch (err) {
    deps.log.warn({ err: String(err) }, `cannot position ${opts.what}`);
    throw new ApiError('feed_unavailable', opts.unavailable ?? 'market data log unreachable; retry shortly');
  }
  return { feed, staleFeeds: () => initialStaleFeeds(deps.tail, subscribed.selection) };
}

/** Sends each stale feed as a `feed_stale` warning (silent 0 s: stale since before the stream). */
export function sendStale(sink: Pick<FeedSink, 'feedStale'>, feeds: readonly StaleFeed[]): void {
  for (const f of feeds) sink.feedStale(f.coin, 0, f.source);
}
