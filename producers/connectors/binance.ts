// https://github.com/binance/binance-spot-api-docs/blob/master/web-socket-streams.md
// https://developers.binance.com/docs/derivatives/usds-margined-futures/websocket-market-streams
/**
 * Binance (spot, or USD-M futures by URL): `<symbol>@trade` and `<symbol>@depth@100ms`, subscribed
 * with one `SUBSCRIBE` message per connection. Trades are published as the mapper gives them under
 * `binance.<symbol>.trade.<t>`; a trade id at or below the last one published is a replay.
 * Books: every diff goes through the local book (binance-depth-sync.ts) and each applied diff
 * publishes the top levels of the book as a snapshot under `binance.<symbol>.book.<u>`, the
 * venue's own update id, so the same book state always has the same message id; a book at or below
 * the last `u` published (rebuilt from an older snapshot) is not sent again. A gap, a diff in
 * an unknown format or a crossed book drops the book (logged, counted) and a new REST snapshot
 * rebuilds it; no book is published in between.
 */
import type { BookEvent } from '../../contracts/events.ts';
import { connectorResyncs } from '../../platform/metrics.ts';
import { book } from '../normalizer/canonical.ts';
import { isObject, type Json } from '../normalizer/fields.ts';
import { isNormalizeError } from '../normalizer/index.ts';
import { mapAll } from '../normalizer/mapper.ts';
import { binanceMapper } from '../normalizer/mappers/binance.ts';
import { BinanceDepthSync, type DepthDiff, type DepthStep } from './binance-depth-sync.ts';
import { type SnapshotFetcher, updateId } from './binance-snapshot.ts';
import {
  type Frame,
  type FrameOutcome,
  messageId,
  parseFrame,
  type VenueAdapter,
  type VenueDeps,
} from './venue.ts';

/** A diff with the times of the event that carried it (the book published after it takes them). */
type TimedDiff = DepthDiff & { timestampMs: number; captureMs: number };

type SymbolState = {
  symbol: string;
  depth: BinanceDepthSync<TimedDiff>;
  lastTradeId: number;
  /** `u` of the last book published: a book rebuilt from an older snapshot is not sent again. */
  lastBookId: number;
  fetching: boolean;
};

export type BinanceOptions = VenueDeps & { wsUrl: string; fetchSnapshot: SnapshotFetcher };

export function binanceVenue(opts: BinanceOptions): VenueAdapter {
  const { log, emit } = opts;
  const abort = new AbortController();
  const states = new Map<string, SymbolState>(
    opts.symbols.map((s) => [
      s.toUpperCase(),
      {
        symbol: s.toUpperCase(),
        depth: new BinanceDepthSync<TimedDiff>(),
        lastTradeId: -1,
        lastBookId: -1,
        fetching: false,
      },
    ]),
  );

  const resync = (st: SymbolState, reason: string, detail: Record<string, unknown>) => {
    connectorResyncs.inc({ venue: 'binance', reason });
    log.warn(
      { venue: 'binance', symbol: st.symbol, reason, ...detail },
      'binance book dropped; resyncing from a snapshot',
    );
    fetchSnapshot(st);
  };

  /** False when nothing was published: the book at this `u` was published before. */
  const publishBook = (st: SymbolState, diff: TimedDiff): boolean => {
    if (!st.depth.isSynced) return true; // dropped by an earlier step of the same snapshot
    if (diff.last <= st.lastBookId) return false;
    let ev: BookEvent;
    try {
      const { depth } = st;
      ev = book(
        'binance',
        st.symbol,
        diff.timestampMs,
        diff.captureMs,
        depth.bids.top(opts.bookDepth),
        depth.asks.top(opts.bookDepth),
        true,
      );
    } catch (err) {
      if (!isNormalizeError(err)) throw err;
      st.depth.unsync();
      resync(st, 'crossed_book', { updateId: diff.last, err: err.message });
      return true;
    }
    st.lastBookId = diff.last;
    return emit(ev, messageId('binance', st.symbol, 'book', diff.last), diff.last);
  };

  /** Publishes what a step calls for; a gap drops the book and asks for a snapshot. */
  const handle = (st: SymbolState, step: DepthStep<TimedDiff>): FrameOutcome => {
    switch (step.kind) {
      case 'applied':
        return publishBook(st, step.diff) ? 'ok' : 'duplicate';
      case 'duplicate':
        return 'duplicate';
      case 'buffered':
        fetchSnapshot(st);
        return 'ok';
      case 'gap':
        resync(st, step.reason, { expected: step.expected, got: step.got });
        return 'ok';
    }
  };

  function fetchSnapshot(st: SymbolState): void {
    if (st.fetching || abort.signal.aborted) return;
    st.fetching = true;
    (async () => {
      while (!st.depth.isSynced && !abort.signal.aborted) {
        const snap = await opts.fetchSnapshot(st.symbol, abort.signal);
        const steps = st.depth.sync(snap.lastUpdateId, snap.bids, snap.asks);
        log.info(
          { venue: 'binance', symbol: st.symbol, lastUpdateId: snap.lastUpdateId, buffered: steps.length },
          'binance book synced from snapshot',
        );
        for (const step of steps) if (step.kind !== 'gap') handle(st, step);
        const gap = steps.find((s) => s.kind === 'gap');
        if (gap?.kind === 'gap') {
          connectorResyncs.inc({ venue: 'binance', reason: gap.reason });
          log.warn(
            { venue: 'binance', symbol: st.symbol, reason: gap.reason, expected: gap.expected, got: gap.got },
            'binance snapshot older than the stream; fetching another',
          );
        }
      }
    })()
      .catch((err) => {
        if (!abort.signal.aborted)
          log.error(
            { venue: 'binance', symbol: st.symbol, err: String(err) },
            'binance snapshot loop failed',
          );
      })
      .finally(() => {
        st.fetching = false;
      });
  }

  const onTrade = (msg: unknown, receivedAtMs: number): FrameOutcome => {
    let outcome: FrameOutcome = 'ok';
    for (const ev of mapAll(binanceMapper, msg, { symbol: undefined, receivedAtMs })) {
      const st = states.get(ev.symbol);
      if (!st || ev.event_type !== 'trade') continue;
      const id = Number(ev.venue_trade_id);
      if (id <= st.lastTradeId) {
        outcome = 'duplicate';
        continue;
      }
      if (Number.isSafeInteger(id)) st.lastTradeId = id;
      if (!emit(ev, messageId('binance', st.symbol, 'trade', ev.venue_trade_id as string), id))
        outcome = 'duplicate';
    }
    return outcome;
  };

  const onDepth = (msg: unknown, data: Json, receivedAtMs: number): FrameOutcome => {
    const st = typeof data.s === 'string' ? states.get(data.s) : undefined;
    if (!st) return 'ok';
    let diff: TimedDiff;
    try {
      const [ev] = mapAll(binanceMapper, msg, { symbol: undefined, receivedAtMs });
      if (ev?.event_type !== 'book') return 'ok';
      diff = {
        first: updateId(data.U, 'U'),
        last: updateId(data.u, 'u'),
        previous: data.pu === undefined ? undefined : updateId(data.pu, 'pu'),
        bids: ev.bids,
        asks: ev.asks,
        timestampMs: ev.timestamp_ms,
        captureMs: ev.capture_time_ms,
      };
    } catch (err) {
      // The diff cannot be applied, so the book would be wrong from here on: rebuild it.
      if (st.depth.isSynced) {
        st.depth.unsync();
        resync(st, 'format_error', {});
      }
      throw err;
    }
    return handle(st, st.depth.push(diff));
  };

  return {
    venue: 'binance',
    url: opts.wsUrl,
    symbols: [...states.keys()],
    subscriptions: () => [
      JSON.stringify({
        method: 'SUBSCRIBE',
        params: [...states.keys()].flatMap((s) => [
          `${s.toLowerCase()}@trade`,
          `${s.toLowerCase()}@depth@100ms`,
        ]),
        id: 1,
      }),
    ],
    onFrame({ text, receivedAtMs }: Frame): FrameOutcome {
      const msg = parseFrame(text);
      // `/ws` sends bare events, `/stream` wraps them as {stream, data}.
      const data = isObject(msg) && typeof msg.stream === 'string' ? msg.data : msg;
      if (isObject(data)) {
        if (data.e === 'trade' || data.e === 'aggTrade') return onTrade(msg, receivedAtMs);
        if (data.e === 'depthUpdate') return onDepth(msg, data, receivedAtMs);
        if ('id' in data && ('result' in data || 'error' in data)) {
          if (data.error !== undefined)
            log.error({ venue: 'binance', answer: data }, 'binance refused the subscription');
          return 'ok';
        }
      }
      // Anything else: the mapper knows which events carry no market data and refuses the rest.
      mapAll(binanceMapper, msg, { symbol: undefined, receivedAtMs });
      return 'ok';
    },
    stop: () => abort.abort(),
  };
}
