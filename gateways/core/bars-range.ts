/**
 * The trade bars of one coin whose `start_ms` lies in [startMs, endMs), read from the `DERIVED`
 * stream (contracts/derived.ts) for JSON-RPC `md_ohlcv` and gRPC `GetBars`, in stream order.
 *
 * Positioned by the stream's store time: a bar is stored once its span has ended, so every bar
 * starting at or after startMs was stored at or after it; the read begins there. The producer
 * stores each series (source, coin, kind) in start order, so a series is done at its first bar
 * starting at or after endMs: with one source selected the read stops there; otherwise it reads the
 * coin's bars of that kind to the stream's end (a producer catching up stores bars late, so no
 * store time bounds them). A range of more than OHLCV_MAX_BARS spans, or ending before it starts,
 * is `invalid_time_range`.
 */
import { type BarKind, DERIVED_DURATIONS_MS } from '../../contracts/derived.ts';
import { ApiError } from '../../contracts/errors.ts';
import { OHLCV_MAX_BARS } from '../../contracts/jsonrpc.ts';
import type { Nats } from '../../platform/nats.ts';
import { DERIVED_FEED } from './derived-feed.ts';
import type { FeedEvent } from './feed-event.ts';
import { eventsStoredBetween } from './log-range.ts';
import type { Selection } from './selection.ts';

const START_KEY = '"start_ms":';

/** A bar's `start_ms`, read from its JSON without parsing it. */
function startOf(ev: FeedEvent): number {
  const at = ev.json.indexOf(START_KEY);
  return at < 0
    ? Number.NaN
    : Number.parseInt(ev.json.slice(at + START_KEY.length, at + START_KEY.length + 20), 10);
}

/** Refuses a range that ends before it starts or spans more than OHLCV_MAX_BARS bars of `kind`. */
export function checkBarRange(kind: BarKind, startMs: number, endMs: number): void {
  const range = (message: string, extra: Record<string, unknown> = {}) =>
    new ApiError('invalid_time_range', message, { start_ms: startMs, end_ms: endMs, ...extra });
  if (endMs < startMs) throw range('end_ms is before start_ms');
  if ((endMs - startMs) / DERIVED_DURATIONS_MS[kind] > OHLCV_MAX_BARS)
    throw range(`the range spans more than ${OHLCV_MAX_BARS} bars of ${kind}`, { max_bars: OHLCV_MAX_BARS });
}

/** Up to `limit + 1` bars of the selection (one kind, one coin) starting in [startMs, endMs). */
export async function barsInRange(
  nats: Nats,
  selection: Selection,
  startMs: number,
  endMs: number,
  limit: number,
  signal: AbortSignal,
): Promise<FeedEvent[]> {
  const oneSource = selection.sources !== null && selection.sources.size === 1;
  const bars: FeedEvent[] = [];
  await eventsStoredBetween(
    nats,
    selection,
    startMs,
    Number.POSITIVE_INFINITY,
    (ev) => {
      const start = startOf(ev);
      if (start >= endMs) return !oneSource;
      if (start >= startMs) bars.push(ev);
      return bars.length <= limit;
    },
    signal,
    DERIVED_FEED,
  );
  return bars;
}
