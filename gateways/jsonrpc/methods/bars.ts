/**
 * `md_ohlcv [coin, interval, start_ms, end_ms, source?]`: the coin's trade bars (`1s`, `1m`, `1h`;
 * the DERIVED stream's `bar_1s`, `bar_1m`, `bar_1h`, contracts/derived.ts) whose `start_ms` lies in
 * [start_ms, end_ms), oldest first, each as the stream stores it (with its `seq`). -32008 when end
 * is before start or the range spans more than OHLCV_MAX_BARS bars.
 *
 * Read from the DERIVED stream's store time: a bar is stored once its span has ended, so every
 * bar starting at or after start_ms was stored at or after it; the reading begins there. The
 * producer stores each series (source, coin, kind) in start order, so a series is done at its first
 * bar starting at or after end_ms: with one source named the read stops there, otherwise it reads
 * the coin's bars of that kind to the stream's end (a producer catching up stores bars late, so
 * no store time bounds them).
 */
import { DERIVED_DURATIONS_MS } from '../../../contracts/derived.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { OHLCV_MAX_BARS, type ParamsOf } from '../../../contracts/jsonrpc.ts';
import { DERIVED_FEED } from '../../core/derived-feed.ts';
import type { FeedEvent } from '../../core/feed-event.ts';
import { eventsStoredBetween } from '../../core/log-range.ts';
import type { CallContext, EdgeDeps, Json } from '../context.ts';
import { budgetOf } from '../request-budget.ts';
import { selectionOf } from '../selection.ts';

const START_KEY = '"start_ms":';

/** A bar's `start_ms`, read from its JSON without parsing it. */
function startOf(ev: FeedEvent): number {
  const at = ev.json.indexOf(START_KEY);
  return at < 0
    ? Number.NaN
    : Number.parseInt(ev.json.slice(at + START_KEY.length, at + START_KEY.length + 20), 10);
}

export function barMethods(deps: EdgeDeps) {
  return {
    md_ohlcv: async (p: ParamsOf<'md_ohlcv'>, ctx: CallContext): Promise<Json> => {
      const kind = `bar_${p.interval}` as const;
      const span = DERIVED_DURATIONS_MS[kind];
      const range = (message: string, extra: Record<string, unknown> = {}) =>
        new ApiError('invalid_time_range', message, { start_ms: p.start_ms, end_ms: p.end_ms, ...extra });
      if (p.end_ms < p.start_ms) throw range('end_ms is before start_ms');
      if ((p.end_ms - p.start_ms) / span > OHLCV_MAX_BARS)
        throw range(`the range spans more than ${OHLCV_MAX_BARS} bars of ${p.interval}`, {
          max_bars: OHLCV_MAX_BARS,
        });
      const { selection } = await selectionOf(
        deps,
        { coins: [p.coin], event_types: [kind], ...(p.source ? { sources: [p.source] } : {}) },
        ctx,
      );
      const budget = budgetOf(deps.nats, ctx);
      const limit = budget.room(OHLCV_MAX_BARS);
      const bars: FeedEvent[] = [];
      await eventsStoredBetween(
        deps.nats,
        selection,
        p.start_ms,
        Number.POSITIVE_INFINITY,
        (ev) => {
          const start = startOf(ev);
          if (start >= p.end_ms) return p.source === undefined;
          if (start >= p.start_ms) bars.push(ev);
          return bars.length <= limit;
        },
        ctx.signal,
        DERIVED_FEED,
      );
      const kept = budget.keep(bars.slice(0, limit));
      const head = JSON.stringify({
        coin: p.coin,
        interval: p.interval,
        ...(p.source ? { source: p.source } : {}),
        start_ms: p.start_ms,
        end_ms: p.end_ms,
        truncated: bars.length > kept.length,
      });
      return `${head.slice(0, -1)},"bars":[${kept.map((b) => b.json).join(',')}]}` as Json;
    },
  };
}
