/**
 * A tail of a stream beside `MD` (the derived series, accounts' own events): one per NATS
 * connection of the process, started the first time a client needs it (a failed start is not kept,
 * so the next client tries again). Its feeds never report stale: staleness is the market feed's
 * to report (the `MD` tail's, attach-feed.ts).
 */
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { type FeedSpec, LiveTail } from './live-tail.ts';

/** Longer than any series is quiet. */
const NEVER_STALE_MS = 7 * 24 * 3_600_000;

/** The process's tail of `feed` on a connection, with what `prepare` makes of it once started. */
export function sideTail<T>(
  feed: FeedSpec,
  ringSize: number,
  prepare: (tail: LiveTail) => T,
): (nats: Nats, log: Logger) => Promise<T> {
  const started = new WeakMap<Nats, Promise<T>>();
  return (nats, log) => {
    let tail = started.get(nats);
    if (!tail) {
      tail = LiveTail.start(nats, log, {
        ringSize,
        staleAfterMs: NEVER_STALE_MS,
        expectedCoins: [],
        feed,
      }).then(prepare);
      started.set(nats, tail);
      tail.catch(() => started.delete(nats));
    }
    return tail;
  };
}
