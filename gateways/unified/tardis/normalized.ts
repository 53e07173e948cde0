/**
 * Our canonical events as tardis-machine's normalized messages (the shapes of its public
 * documentation), for one connection:
 * - a trade → `{type:"trade", symbol, exchange, id, price, amount, side, timestamp, localTimestamp}`
 *   (`exchange` = our `source`, `id` = the venue's trade id when we have it, else ours; `timestamp`
 *   = the event's `timestamp_ms`, `localTimestamp` = its `capture_time_ms`, both ISO 8601);
 * - a book → `book_change`: our snapshots (`is_snapshot` absent or true) have `isSnapshot: true`,
 *   Binance diffs `isSnapshot: false` (an amount of 0 removes the level), as tardis defines;
 * - `trade_bar_*`: bars by time (bucketed on the trade's `timestamp`, published by the first trade
 *   of a later bucket, `timestamp` = the bucket's end), by tick count or by volume (published by
 *   the trade that fills them); `open/high/low/close`, `volume`, `buyVolume`, `sellVolume`,
 *   `trades`, `vwap`, `openTimestamp`, `closeTimestamp`. A bar still open when the stream ends is
 *   not sent, as tardis-machine does;
 * - `book_snapshot_{depth}_{interval}`: the top `depth` levels of the book kept from the
 *   book changes, sent before the first change of a later interval (every change within the
 *   depth with interval 0), `timestamp` = the last change applied.
 * Per connection and per (exchange, symbol): bars and books are state, never shared.
 */
import type { TardisDataType } from '../../../contracts/tardis.ts';
import type { FeedEvent } from '../../core/feed-event.ts';

type Level = { price: number; size: number };
type Stored = {
  event_type: 'trade' | 'book';
  source: string;
  symbol: string;
  timestamp_ms: number;
  capture_time_ms: number;
  side?: 'buy' | 'sell';
  price?: number;
  size?: number;
  trade_id?: string;
  venue_trade_id?: string;
  bids?: Level[];
  asks?: Level[];
  is_snapshot?: boolean;
};

/** What one options object of the request asks for (its exchange, symbols and data types). */
export type Wanted = { exchange: string; symbols: ReadonlySet<string> | null; dataTypes: TardisDataType[] };

const iso = (ms: number) => new Date(ms).toISOString();
const levels = (ls: Level[] | undefined) => (ls ?? []).map((l) => ({ price: l.price, amount: l.size }));

class Bar {
  private open = 0;
  private high = Number.NEGATIVE_INFINITY;
  private low = Number.POSITIVE_INFINITY;
  private close = 0;
  private volume = 0;
  private buyVolume = 0;
  private sellVolume = 0;
  private trades = 0;
  private vwap = 0;
  private openMs = 0;
  private closeMs = 0;

  constructor(private readonly type: Extract<TardisDataType, { kind: 'trade_bar' }>) {}

  /** The messages a trade publishes: a finished time bar before it, a filled tick or volume bar after. */
  take(t: Stored, out: string[]): void {
    if (this.trades > 0 && this.type.bar === 'time') {
      const bucket = Math.floor(this.openMs / this.type.interval);
      if (Math.floor(t.timestamp_ms / this.type.interval) > bucket)
        out.push(this.emit(t, (bucket + 1) * this.type.interval));
    }
    const price = t.price ?? 0;
    const amount = t.size ?? 0;
    if (this.trades === 0) {
      this.open = price;
      this.openMs = t.timestamp_ms;
    }
    this.high = Math.max(this.high, price);
    this.low = Math.min(this.low, price);
    this.close = price;
    this.closeMs = t.timestamp_ms;
    if (t.side === 'buy') this.buyVolume += amount;
    if (t.side === 'sell') this.sellVolume += amount;
    this.trades++;
    this.vwap = (this.vwap * this.volume + price * amount) / (this.volume + amount || 1);
    this.volume += amount;
    const full =
      (this.type.bar === 'tick' && this.trades >= this.type.interval) ||
      (this.type.bar === 'volume' && this.volume >= this.type.interval);
    if (full) out.push(this.emit(t, t.timestamp_ms));
  }

  private emit(t: Stored, atMs: number): string {
    const line = JSON.stringify({
      type: 'trade_bar',
      symbol: t.symbol,
      exchange: t.source,
      name: this.type.name,
      interval: this.type.interval,
      kind: this.type.bar,
      open: this.open,
      high: this.high,
      low: this.low,
      close: this.close,
      volume: this.volume,
      buyVolume: this.buyVolume,
      sellVolume: this.sellVolume,
      trades: this.trades,
      vwap: this.vwap,
      openTimestamp: iso(this.openMs),
      closeTimestamp: iso(this.closeMs),
      timestamp: iso(atMs),
      localTimestamp: iso(t.capture_time_ms),
    });
    this.high = Number.NEGATIVE_INFINITY;
    this.low = Number.POSITIVE_INFINITY;
    this.volume = this.buyVolume = this.sellVolume = this.trades = this.vwap = 0;
    return line;
  }
}

/** A price-level book kept from book changes (snapshots replace it, diffs amend it). */
class Book {
  private bids = new Map<number, number>();
  private asks = new Map<number, number>();
  lastMs = 0;

  apply(b: Stored): void {
    if (b.is_snapshot !== false) {
      this.bids.clear();
      this.asks.clear();
    }
    for (const [side, ls] of [
      [this.bids, b.bids],
      [this.asks, b.asks],
    ] as const)
      for (const l of ls ?? []) {
        if (l.size === 0) side.delete(l.price);
        else side.set(l.price, l.size);
      }
    this.lastMs = b.timestamp_ms;
  }

  top(depth: number): {
    bids: { price: number; amount: number }[];
    asks: { price: number; amount: number }[];
  } {
    const take = (m: Map<number, number>, desc: boolean) =>
      [...m.entries()]
        .sort((a, b) => (desc ? b[0] - a[0] : a[0] - b[0]))
        .slice(0, depth)
        .map(([price, amount]) => ({ price, amount }));
    return { bids: take(this.bids, true), asks: take(this.asks, false) };
  }
}

class Snapshots {
  private changed = false;
  private lastTop = '';
  constructor(private readonly type: Extract<TardisDataType, { kind: 'book_snapshot' }>) {}

  /** Before a change is applied: the snapshot owed for the interval that ended. */
  before(b: Stored, book: Book, out: string[]): void {
    if (!this.changed || this.type.interval === 0) return;
    if (Math.floor(b.timestamp_ms / this.type.interval) > Math.floor(book.lastMs / this.type.interval))
      out.push(this.sample(b, book));
  }

  /** After a change is applied: marks the book changed within the depth (sent at once with interval 0). */
  after(b: Stored, book: Book, out: string[]): void {
    const top = JSON.stringify(book.top(this.type.depth));
    if (top !== this.lastTop) this.changed = true;
    this.lastTop = top;
    if (this.changed && this.type.interval === 0) out.push(this.sample(b, book));
  }

  private sample(b: Stored, book: Book): string {
    this.changed = false;
    const { bids, asks } = book.top(this.type.depth);
    return JSON.stringify({
      type: 'book_snapshot',
      symbol: b.symbol,
      exchange: b.source,
      name: this.type.name,
      depth: this.type.depth,
      interval: this.type.interval,
      bids,
      asks,
      timestamp: iso(book.lastMs),
      localTimestamp: iso(b.capture_time_ms),
    });
  }
}

/** The normalized messages of one connection's events (one line each, JSON). */
export class TardisMapper {
  private readonly state = new Map<string, { bars: Bar[]; book: Book; snaps: Snapshots[] }>();

  constructor(private readonly wanted: readonly Wanted[]) {}

  /** The messages `ev` gives, in order (none when no options object takes it). */
  map(ev: FeedEvent): string[] {
    const w = this.wanted.find(
      (x) => x.exchange === ev.source && (x.symbols === null || x.symbols.has(ev.symbol)),
    );
    if (!w) return [];
    const e = JSON.parse(ev.json) as Stored;
    const key = `${ev.source}\u0000${ev.symbol}`;
    let s = this.state.get(key);
    if (!s) {
      s = {
        bars: w.dataTypes.flatMap((d) => (d.kind === 'trade_bar' ? [new Bar(d)] : [])),
        book: new Book(),
        snaps: w.dataTypes.flatMap((d) => (d.kind === 'book_snapshot' ? [new Snapshots(d)] : [])),
      };
      this.state.set(key, s);
    }
    const out: string[] = [];
    const wants = (kind: TardisDataType['kind']) => w.dataTypes.some((d) => d.kind === kind);
    if (e.event_type === 'trade') {
      for (const b of s.bars) b.take(e, out);
      if (wants('trade')) out.unshift(tradeLine(e));
    } else {
      for (const sn of s.snaps) sn.before(e, s.book, out);
      if (wants('book_change')) out.push(bookChangeLine(e));
      s.book.apply(e);
      for (const sn of s.snaps) sn.after(e, s.book, out);
    }
    return out;
  }
}

function tradeLine(t: Stored): string {
  return JSON.stringify({
    type: 'trade',
    symbol: t.symbol,
    exchange: t.source,
    id: t.venue_trade_id ?? t.trade_id,
    price: t.price,
    amount: t.size,
    side: t.side ?? 'unknown',
    timestamp: iso(t.timestamp_ms),
    localTimestamp: iso(t.capture_time_ms),
  });
}

function bookChangeLine(b: Stored): string {
  return JSON.stringify({
    type: 'book_change',
    symbol: b.symbol,
    exchange: b.source,
    isSnapshot: b.is_snapshot !== false,
    bids: levels(b.bids),
    asks: levels(b.asks),
    timestamp: iso(b.timestamp_ms),
    localTimestamp: iso(b.capture_time_ms),
  });
}
