/**
 * `md_trades [coin, start_ms, end_ms, limit?]`: the coin's trades with start_ms ≤ timestamp_ms ≤
 * end_ms, read from the log in the order they were stored, at most `limit` (`truncated` says more
 * were there, or the request's answer had no more room: narrow the range to page). -32008 when end is before start, the range is wider than
 * the configured cap, or it starts before what the log retains.
 *
 * The log is positioned by its own store time: a trade is stored after its event time, and at most
 * `tradesSkewMs` after it, so reading what was stored in [start_ms − 1 s, end_ms + skew] finds every
 * trade of the range (the second of margin absorbs clock differences between hosts).
 *
 * A caller with an account also gets its own trades: they are on `OWN` (gateways/core/own-feed.ts),
 * read over the same stored-time window, and merged with the platform's by stored time (the
 * platform's first on a tie, then each stream's order); an own trade's `seq` is `OWN`'s and its
 * JSON says `"own":true`. A caller without one (the open guard) never reads `OWN`.
 */
import { ApiError } from '../../../contracts/errors.ts';
import { type ParamsOf, TRADES_DEFAULT_LIMIT } from '../../../contracts/jsonrpc.ts';
import { STREAMS } from '../../../contracts/streams.ts';
import type { FeedEvent } from '../../core/feed-event.ts';
import { fieldsOf } from '../../core/latest-state.ts';
import { type FeedSpec, MD_FEED } from '../../core/live-tail.ts';
import { eventsStoredBetween } from '../../core/log-range.ts';
import { mergeTwo } from '../../core/merge-two.ts';
import { OWN_FEED } from '../../core/own-feed.ts';
import type { Selection } from '../../core/selection.ts';
import type { CallContext, EdgeDeps, Json } from '../context.ts';
import { budgetOf } from '../request-budget.ts';
import { onlyCoin, selectionOf } from '../selection.ts';

const CLOCK_MARGIN_MS = 1_000;

export function tradeMethods(deps: EdgeDeps) {
  const { settings } = deps;

  /** The earliest time the log still holds, Unix ms: its age limit, or later when it has dropped messages. */
  async function retainedFromMs(): Promise<number> {
    const { state } = await deps.nats.jsm.streams.info(STREAMS.MD);
    const byAge = Date.now() - settings.retentionMs;
    return state.first_seq > 1 ? Math.max(byAge, Date.parse(state.first_ts)) : byAge;
  }

  type Stored = { ev: FeedEvent; storedMs: number };

  /** At most `max` trades of the range from one stream, in stream order, with their stored times. */
  async function tradesOf(
    selection: Selection,
    p: ParamsOf<'md_trades'>,
    max: number,
    signal: AbortSignal,
    feed: FeedSpec = MD_FEED,
  ): Promise<Stored[]> {
    const out: Stored[] = [];
    await eventsStoredBetween(
      deps.nats,
      selection,
      p.start_ms - CLOCK_MARGIN_MS,
      p.end_ms + settings.tradesSkewMs,
      (ev, storedMs) => {
        const t = fieldsOf(ev).timestamp_ms;
        if (t !== null && t >= p.start_ms && t <= p.end_ms) out.push({ ev, storedMs });
        return out.length < max;
      },
      signal,
      feed,
    );
    return out;
  }

  return {
    md_trades: async (p: ParamsOf<'md_trades'>, ctx: CallContext): Promise<Json> => {
      const range = (message: string, extra: Record<string, unknown> = {}) =>
        new ApiError('invalid_time_range', message, { start_ms: p.start_ms, end_ms: p.end_ms, ...extra });
      if (p.end_ms < p.start_ms) throw range('end_ms is before start_ms');
      if (p.end_ms - p.start_ms > settings.tradesMaxRangeMs)
        throw range(`the range is wider than ${settings.tradesMaxRangeMs} ms`, {
          max_range_ms: settings.tradesMaxRangeMs,
        });
      const { selection } = await selectionOf(deps, { coins: [p.coin], event_types: ['trade'] }, ctx);
      const retainedFrom = await retainedFromMs();
      if (p.start_ms < retainedFrom)
        throw range(`start_ms is before the oldest trade retained (${retainedFrom})`, {
          retained_from_ms: retainedFrom,
        });

      // At most what the request's answer still has room for (request-budget.ts): `truncated` says so.
      const budget = budgetOf(deps.nats, ctx);
      const limit = budget.room(p.limit ?? TRADES_DEFAULT_LIMIT);
      // One more than the limit from each stream: whether more were there (`truncated`).
      const [md, own] = await Promise.all([
        tradesOf(selection, p, limit + 1, ctx.signal),
        selection.viewer ? tradesOf(selection, p, limit + 1, ctx.signal, OWN_FEED) : [],
      ]);
      // By stored time, the platform's first on a tie; each stream keeps its own order.
      const trades = mergeTwo(md, own, (t) => t.storedMs)
        .slice(0, limit + 1)
        .map((t) => t.ev);
      const kept = budget.keep(trades.slice(0, limit));
      const truncated = trades.length > kept.length;
      const list = kept.map((t) => t.json).join(',');
      const head = JSON.stringify({
        coin: onlyCoin(selection),
        start_ms: p.start_ms,
        end_ms: p.end_ms,
        truncated,
      });
      return `${head.slice(0, -1)},"trades":[${list}]}` as Json;
    },
  };
}
