/**
 * tardis-dev's normalizers beside ours for the kinds both map, and a field-by-field comparison of
 * their outputs. Each tardis mapper is created and primed (the state it needs before it maps: a
 * depth snapshot per Binance symbol, one dropped first `trades` push per Hyperliquid coin) outside
 * any timing, then fed the same parsed messages as `normalizeBatch`.
 *
 * Field mapping (ours ↔ tardis): symbol ↔ symbol; venue_trade_id ↔ id; price ↔ price; size ↔ amount;
 * side ↔ side; timestamp_ms ↔ timestamp; capture_time_ms ↔ localTimestamp (reported apart: ours is
 * the venue time by contract, tardis's is the receive time it is given); book bids/asks
 * {price, size} ↔ {price, amount} level by level, is_snapshot ↔ isSnapshot; a one-level book
 * (bookTicker, bbo) bids[0] / asks[0] ↔ bidPrice/bidAmount, askPrice/askAmount.
 */
import {
  type BookChange,
  type BookTicker,
  type Mapper,
  normalizeBookChanges,
  normalizeBookTickers,
  normalizeTrades,
  type Trade,
} from 'tardis-dev';
import type { BookEvent, MarketEvent, TradeEvent } from '../../contracts/events.ts';
import { BINANCE_DEPTH_FIRST_U, INTERLEAVED_SYMBOLS } from './normalize-interleaved.ts';

// biome-ignore lint/suspicious/noExplicitAny: tardis's Mapper is generic over its exchange names
export type TardisMapper = Mapper<any, Trade | BookChange | BookTicker>;

export type TardisCase = {
  /** The tardis-dev call and exchange id, as printed. */
  tardis: string;
  /** What is compared, in words. */
  compared: string;
  create(local: Date): TardisMapper;
  compare(ours: MarketEvent, theirs: Trade | BookChange | BookTicker, diff: Diff): void;
};

/** Mismatch counts per field, with the first few examples. */
export class Diff {
  readonly counts: Record<string, number> = {};
  readonly examples: string[] = [];
  compared = 0;
  field(name: string, ours: unknown, theirs: unknown): void {
    if (ours === theirs) return;
    this.counts[name] = (this.counts[name] ?? 0) + 1;
    if (this.examples.length < 3 && name !== 'local_timestamp')
      this.examples.push(`${name}: ours ${JSON.stringify(ours)} vs tardis ${JSON.stringify(theirs)}`);
  }
  /** Mismatches of every field but the local timestamp (whose meaning differs by design). */
  meaningMismatches(): number {
    let n = 0;
    for (const [k, v] of Object.entries(this.counts)) if (k !== 'local_timestamp') n += v;
    return n;
  }
}

function compareTrade(o: MarketEvent, t: Trade | BookChange | BookTicker, d: Diff): void {
  if (o.event_type !== 'trade' || t.type !== 'trade') {
    d.field('type', o.event_type, t.type);
    return;
  }
  const ours = o as TradeEvent;
  d.field('symbol', ours.symbol, t.symbol);
  d.field('id', ours.venue_trade_id, t.id);
  d.field('price', ours.price, t.price);
  d.field('amount', ours.size, t.amount);
  d.field('side', ours.side, t.side);
  d.field('timestamp', ours.timestamp_ms, t.timestamp.getTime());
  d.field('local_timestamp', ours.capture_time_ms, t.localTimestamp.getTime());
}

function compareLevels(name: string, ours: BookEvent['bids'], theirs: BookChange['bids'], d: Diff): void {
  d.field(`${name}.count`, ours.length, theirs.length);
  const n = Math.min(ours.length, theirs.length);
  for (let i = 0; i < n; i++) {
    d.field(`${name}.price`, ours[i]?.price, theirs[i]?.price);
    d.field(`${name}.amount`, ours[i]?.size, theirs[i]?.amount);
  }
}

function compareBook(o: MarketEvent, t: Trade | BookChange | BookTicker, d: Diff): void {
  if (o.event_type !== 'book' || t.type !== 'book_change') {
    d.field('type', o.event_type, t.type);
    return;
  }
  const ours = o as BookEvent;
  d.field('symbol', ours.symbol, t.symbol);
  d.field('is_snapshot', ours.is_snapshot, t.isSnapshot);
  d.field('timestamp', ours.timestamp_ms, t.timestamp.getTime());
  d.field('local_timestamp', ours.capture_time_ms, t.localTimestamp.getTime());
  compareLevels('bids', ours.bids, t.bids, d);
  compareLevels('asks', ours.asks, t.asks, d);
}

function compareTicker(o: MarketEvent, t: Trade | BookChange | BookTicker, d: Diff): void {
  if (o.event_type !== 'book' || t.type !== 'book_ticker') {
    d.field('type', o.event_type, t.type);
    return;
  }
  const ours = o as BookEvent;
  d.field('symbol', ours.symbol, t.symbol);
  d.field('timestamp', ours.timestamp_ms, t.timestamp.getTime());
  d.field('local_timestamp', ours.capture_time_ms, t.localTimestamp.getTime());
  d.field('bids.count', ours.bids.length, 1);
  d.field('asks.count', ours.asks.length, 1);
  d.field('bid_price', ours.bids[0]?.price, t.bidPrice);
  d.field('bid_amount', ours.bids[0]?.size, t.bidAmount);
  d.field('ask_price', ours.asks[0]?.price, t.askPrice);
  d.field('ask_amount', ours.asks[0]?.size, t.askAmount);
}

/** Maps every message through a tardis mapper, as tardis-dev's own `normalizeMessages` loop does. */
export function tardisMapAll(
  mapper: TardisMapper,
  messages: readonly unknown[],
  local: Date,
  out: unknown[],
) {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!mapper.canHandle(m)) continue;
    const it = mapper.map(m, local);
    if (it !== undefined) for (const e of it) out.push(e);
  }
}

/** Binance depth snapshots (REST, as tardis records them) with `lastUpdateId` just below every symbol's first diff. */
function primeBinanceDepth(mapper: TardisMapper, local: Date): void {
  const msgs = INTERLEAVED_SYMBOLS.binance.map((s) => ({
    stream: `${s.toLowerCase()}@depthSnapshot`,
    generated: true,
    data: { lastUpdateId: BINANCE_DEPTH_FIRST_U - 1, bids: [], asks: [] },
  }));
  const out: unknown[] = [];
  tardisMapAll(mapper, msgs, local, out);
  if (out.length !== msgs.length) throw new Error('tardis binance depth mapper was not primed');
}

/** tardis drops the first `trades` push of each coin (the recent-trades snapshot after subscribing). */
function primeHyperliquidTrades(mapper: TardisMapper, local: Date): void {
  const msgs = INTERLEAVED_SYMBOLS.hyperliquid.map((coin) => ({
    channel: 'trades',
    data: [{ coin, side: 'B', px: '1', sz: '1', time: 0, hash: '0x0', tid: 1, users: [] }],
  }));
  const out: unknown[] = [];
  tardisMapAll(mapper, msgs, local, out);
  if (out.length !== 0) throw new Error('tardis hyperliquid trades mapper: unexpected priming output');
}

export const TARDIS_CASES: Record<string, TardisCase> = {
  binance_trades: {
    tardis: "normalizeTrades('binance') → BinanceTradesMapper",
    compared: 'trade: symbol, id, price, amount, side, timestamp (and local timestamp apart)',
    create: (local) => normalizeTrades('binance', local) as TardisMapper,
    compare: compareTrade,
  },
  binance_depth_diffs: {
    tardis:
      "normalizeBookChanges('binance') → BinanceBookChangeMapper, primed with a depth snapshot per symbol",
    compared:
      'diff book ↔ book_change (isSnapshot false): symbol, is_snapshot, timestamp, every bid/ask level price and amount in order, zero-size deletions included',
    create: (local) => {
      const m = normalizeBookChanges('binance', local) as TardisMapper;
      primeBinanceDepth(m, local);
      return m;
    },
    compare: compareBook,
  },
  binance_book_tickers: {
    tardis: "normalizeBookTickers('binance-futures') → BinanceBookTickerMapper",
    compared:
      'one-level book snapshot ↔ book_ticker: symbol, timestamp, bids[0]/asks[0] price and size ↔ bid/ask price and amount',
    create: (local) => normalizeBookTickers('binance-futures', local) as TardisMapper,
    compare: compareTicker,
  },
  hyperliquid_trades: {
    tardis: "normalizeTrades('hyperliquid') → HyperliquidTradesMapper, primed with one push per coin",
    compared: 'trade per fill: symbol, id (tid), price, amount, side, timestamp (and local timestamp apart)',
    create: (local) => {
      const m = normalizeTrades('hyperliquid', local) as TardisMapper;
      primeHyperliquidTrades(m, local);
      return m;
    },
    compare: compareTrade,
  },
  hyperliquid_books: {
    tardis: "normalizeBookChanges('hyperliquid') → HyperliquidBookChangeMapper",
    compared:
      'book snapshot ↔ book_change (isSnapshot true): symbol, is_snapshot, timestamp, every level price and amount in order',
    create: (local) => normalizeBookChanges('hyperliquid', local) as TardisMapper,
    compare: compareBook,
  },
  hyperliquid_bbo: {
    tardis: "normalizeBookTickers('hyperliquid') → HyperliquidBookTickerMapper",
    compared:
      'one-level book snapshot ↔ book_ticker: symbol, timestamp, bids[0]/asks[0] price and size ↔ bid/ask price and amount',
    create: (local) => normalizeBookTickers('hyperliquid', local) as TardisMapper,
    compare: compareTicker,
  },
};
