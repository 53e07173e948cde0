// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/subscriptions
// https://hyperliquid.gitbook.io/hyperliquid-docs/for-developers/api/websocket/timeouts-and-heartbeats
/**
 * Hyperliquid: `trades` and `l2Book` per coin, one `subscribe` message each, and a `ping` every
 * 30 s (the venue closes connections silent for 60 s). `l2Book` pushes are whole snapshots, so
 * the local book is simply the latest one: a lost frame costs nothing once the next snapshot
 * lands, and a snapshot no newer than the last published (`time`) is a replay.
 *
 * Trades carry no sequence: `tid` is a hash, unique only with `time` and coin, and the first push
 * after every (re)subscription replays recent trades. A trade is new when it is later than the
 * newest published trade of its coin, or at that same `time` with a `tid` not yet published; the
 * whole frame is judged against the state before it (replays may list newest first). Message ids
 * are `hyperliquid.<coin>.trade.<time>.<tid>` and `hyperliquid.<coin>.book.<time>`. A frame whose
 * events `MD` already holds from before a restart (log-floor.ts) is a replay too.
 */
import type { MarketEvent, TradeEvent } from '../../contracts/events.ts';
import { isObject } from '../normalizer/fields.ts';
import { mapAll } from '../normalizer/mapper.ts';
import { hyperliquidMapper } from '../normalizer/mappers/hyperliquid.ts';
import { scanL2Book } from './hyperliquid-book-scan.ts';
import {
  type Frame,
  type FrameOutcome,
  messageId,
  parseFrame,
  type VenueAdapter,
  type VenueDeps,
} from './venue.ts';

type CoinState = {
  /** Newest published trade time, ms, and the tids published at that time. */
  tradeTime: number;
  tradeIds: Set<string>;
  bookTime: number;
};

export type HyperliquidOptions = VenueDeps & { wsUrl: string };

export function hyperliquidVenue(opts: HyperliquidOptions): VenueAdapter {
  const { emit, log } = opts;
  const coins = new Map<string, CoinState>(
    opts.symbols.map((c) => [c, { tradeTime: -1, tradeIds: new Set(), bookTime: -1 }]),
  );

  const onTrades = (events: MarketEvent[]): FrameOutcome => {
    const fresh: TradeEvent[] = [];
    for (const ev of events) {
      const st = coins.get(ev.symbol);
      if (!st || ev.event_type !== 'trade') continue;
      const id = ev.venue_trade_id as string;
      const seen =
        ev.timestamp_ms < st.tradeTime ||
        (ev.timestamp_ms === st.tradeTime && st.tradeIds.has(id)) ||
        fresh.some(
          (f) => f.symbol === ev.symbol && f.timestamp_ms === ev.timestamp_ms && f.venue_trade_id === id,
        );
      if (!seen) fresh.push(ev);
    }
    let published = 0;
    for (const ev of fresh) {
      const st = coins.get(ev.symbol) as CoinState;
      const tid = ev.venue_trade_id as string;
      if (ev.timestamp_ms > st.tradeTime) {
        st.tradeTime = ev.timestamp_ms;
        st.tradeIds.clear();
      }
      if (ev.timestamp_ms === st.tradeTime) st.tradeIds.add(tid);
      const id = messageId('hyperliquid', ev.symbol, 'trade', ev.timestamp_ms, tid);
      if (emit(ev, id, ev.timestamp_ms, tid)) published++;
    }
    return published === 0 && events.length > 0 ? 'duplicate' : 'ok';
  };

  const onBook = (ev: MarketEvent | undefined): FrameOutcome => {
    const st = ev ? coins.get(ev.symbol) : undefined;
    if (!ev || !st) return 'ok';
    if (ev.timestamp_ms <= st.bookTime) return 'duplicate';
    st.bookTime = ev.timestamp_ms;
    const id = messageId('hyperliquid', ev.symbol, 'book', ev.timestamp_ms);
    return emit(ev, id, ev.timestamp_ms) ? 'ok' : 'duplicate';
  };

  return {
    venue: 'hyperliquid',
    url: opts.wsUrl,
    symbols: [...coins.keys()],
    heartbeat: { intervalMs: 30_000, message: JSON.stringify({ method: 'ping' }) },
    subscriptions: () =>
      [...coins.keys()].flatMap((coin) =>
        ['trades', 'l2Book'].map((type) =>
          JSON.stringify({ method: 'subscribe', subscription: { type, coin } }),
        ),
      ),
    onFrame({ text, receivedAtMs }: Frame): FrameOutcome {
      // Books in the venue's exact layout are read in place, the rest parsed (hyperliquid-book-scan.ts).
      const scanned = scanL2Book(text);
      if (scanned) return onBook(scanned);
      const msg = parseFrame(text);
      const events = mapAll(hyperliquidMapper, msg, { symbol: undefined, receivedAtMs });
      const channel = isObject(msg) ? msg.channel : undefined;
      if (channel === 'trades') return onTrades(events);
      if (channel === 'l2Book') return onBook(events[0]);
      if (channel === 'error')
        log.error({ venue: 'hyperliquid', answer: msg }, 'hyperliquid refused a request');
      return 'ok';
    },
  };
}
