/**
 * A replay by time (`from`, `to`, `speed`) on the same feed as a resume, for every streaming
 * transport (attach-feed.ts calls it; ARCHITECTURE "time is a position too"):
 * - `from` becomes a position (time-position.ts): the feed resumes after the last event the
 *   stream stored before it, with `position_not_retained` when it is older than what is kept. A
 *   position the client sends on a reconnect (`Last-Event-ID`, `after_seq`, `from_seq`) wins.
 * - `to` becomes the feed's last sequence, the last event stored at or before it: looked up at
 *   once when `to` has passed, or when the clock reaches it (events wait meanwhile, so none
 *   stored after it slips through). Once every event up to it is delivered, `onComplete` gets
 *   `replay_complete` (that sequence, the count delivered), and the transport closes cleanly.
 *   Without `to`, the feed hands over to live as a resume does.
 * - `speed` paces delivery by the recorded gaps (replay-sink.ts); `max` (the default) does not.
 * Every event keeps its `seq`, so a cut replay resumes exactly by position.
 */
import { type ReplayCompleteNotice, replayComplete } from '../../contracts/notices.ts';
import { seqAtOrBefore } from '../../platform/stream-time.ts';
import { ReplaySink, type ReplaySinkTarget } from './replay-sink.ts';
import {
  type FeedDeps,
  type FeedOptions,
  type FeedSink,
  type FeedSubscription,
  openFeed,
} from './replay-source.ts';
import type { ReplayWindow, Subscribed } from './subscribe.ts';
import { startAtTime } from './time-position.ts';

/** Wait (ms) before the end of a replay is looked up again after a failure. */
const END_RETRY_MS = 1_000;
/** The longest delay a Node timer takes. */
const MAX_TIMER_MS = 2_147_483_647;

export type WindowOptions = FeedOptions & {
  /** The replay reached `to`: the transport sends this notice and closes the stream normally. */
  onComplete(notice: ReplayCompleteNotice): void;
  /** The position the replay starts after, once `from` is resolved (before any event). */
  onPositioned?(after: number): void;
};

export async function openWindowFeed(
  deps: FeedDeps,
  subscribed: Subscribed & { window: ReplayWindow },
  target: FeedSink,
  opts: WindowOptions,
): Promise<FeedSubscription> {
  const { window } = subscribed;
  const stream = deps.tail.feed.stream;
  const sink = new ReplaySink(target as ReplaySinkTarget, window.speed);
  // Where it starts and, for a `to` already passed, where it ends, asked of the stream at once:
  // the feed never hands over anything past the end.
  const toMs = window.toMs;
  const passed = toMs !== null && toMs + 1 <= Date.now();
  let feed: FeedSubscription | null = null;
  /** An end found before the feed opened (the clock reached `to` meanwhile): applied once it has. */
  let endBeforeFeed: number | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  const finishAt = (endSeq: number) => {
    sink.endAt(endSeq);
    if (!feed) {
      endBeforeFeed = endSeq;
      return;
    }
    feed.endAt?.(endSeq, () => {
      sink
        .drained()
        .then(() => {
          if (!closed) opts.onComplete(replayComplete(endSeq, sink.count));
        })
        .catch(() => {});
    });
  };
  if (!passed && toMs !== null) {
    // When the clock reaches `to`, events wait while its last sequence is looked up; the lookup
    // fails only with NATS away, and is asked again until it answers. The clock is read by the
    // sink on every event (the first one after `to` holds at once), armed before the feed opens
    // (`to` may pass while it does), and by a timer (a stream with nothing arriving): a timer
    // alone, late on a busy process, let events stored after `to` through before it fired (seen
    // in a fresh-clone run).
    let asked = false;
    const lookUp = (): void => {
      seqAtOrBefore(deps.nats, stream, toMs, deps.log)
        .then((endSeq) => {
          if (!closed) finishAt(endSeq);
        })
        .catch((err) => {
          deps.log.warn({ err: String(err) }, 'replay end lookup failed; asking again');
          if (!closed) timer = setTimeout(lookUp, END_RETRY_MS);
        });
    };
    const endWhenAnswered = (): void => {
      if (asked) return;
      asked = true;
      sink.hold();
      lookUp();
    };
    sink.holdFrom(toMs + 1, endWhenAnswered);
    // Node's timers hold at most about 24.8 days: a `to` further away is waited for in steps.
    const arm = (): void => {
      const wait = toMs + 1 - Date.now();
      timer = wait > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(endWhenAnswered, wait);
    };
    arm();
  }
  const close = () => {
    closed = true;
    if (timer) clearTimeout(timer);
    feed?.close();
    sink.close();
  };
  try {
    const byTime = subscribed.lastEventId === null && window.fromMs !== null;
    const [start, endNow] = await Promise.all([
      byTime ? startAtTime(deps.nats, stream, window.fromMs as number, deps.log) : null,
      passed ? seqAtOrBefore(deps.nats, stream, toMs, deps.log) : null,
    ]);
    if (start?.notice) target.notice(start.notice);
    const position = start ? start.after : subscribed.lastEventId;
    if (endNow !== null) sink.endAt(endNow);
    opts.onPositioned?.(position ?? deps.tail.lastSeq);
    // A position from `from` has just been checked against the stream: openFeed need not ask again.
    feed = await openFeed(deps, subscribed.selection, position, sink, {
      ...opts,
      checked: start !== null,
    });
    if (endNow !== null) finishAt(endNow);
    else if (endBeforeFeed !== null) finishAt(endBeforeFeed);
  } catch (err) {
    close();
    throw err;
  }
  return { close };
}
