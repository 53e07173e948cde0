/**
 * The derived series of one source: its watermark (highest `timestamp_ms` of any of its events),
 * and per coin the open bars of each kind and the book with its open seconds. Events arrive in
 * `MD` order; closing is driven by the watermark only, so the output is a pure function of the
 * events. Spans already published (at or before `floors`) are built but not emitted (a resume).
 */
import {
  BAR_KINDS,
  type BarKind,
  type BookSnapshotEvent,
  DERIVED_DURATIONS_MS,
  type DerivedEvent,
  SNAPSHOT_DEPTH,
  SNAPSHOT_KIND,
} from '../../contracts/derived.ts';
import type { Source } from '../../contracts/events.ts';
import { derivedSubject } from '../../contracts/subjects.ts';
import { addTrade, finishBar, type OpenBar, openBar } from './bar-accumulator.ts';
import { type BookInput, BookLevels } from './book-levels.ts';
import { assignedStart, isClosed } from './event-time.ts';

const SECOND = DERIVED_DURATIONS_MS[SNAPSHOT_KIND];

type OpenSecond = { events: { book: BookInput; seq: number }[]; lastSeq: number };

type Coin = {
  symbol: string;
  /** Open bars per kind, by start (a few at most: the grace keeps the previous ones open). */
  bars: Record<BarKind, Map<number, OpenBar>>;
  book: BookLevels;
  seconds: Map<number, OpenSecond>;
};

export type Floors = ReadonlyMap<string, number>;

export class SourceBuilder {
  private watermark = Number.NEGATIVE_INFINITY;
  /** The watermark at which the earliest open span closes. */
  private nextCloseAt = Number.POSITIVE_INFINITY;
  private readonly coins = new Map<string, Coin>();
  /** Coins in symbol order: the order closed spans are emitted in. */
  private ordered: Coin[] = [];
  private readonly floors = new Map<string, number>();

  constructor(
    private readonly source: string,
    floors: Floors,
    private readonly graceMs: number,
  ) {
    for (const [k, v] of floors) this.floors.set(k, v);
  }

  trade(seq: number, symbol: string, ts: number, price: number, size: number, out: DerivedEvent[]): void {
    this.advance(ts);
    const coin = this.coin(symbol);
    for (const kind of BAR_KINDS) {
      const d = DERIVED_DURATIONS_MS[kind];
      const start = assignedStart(ts, this.watermark, d, this.graceMs);
      const bars = coin.bars[kind];
      const bar = bars.get(start);
      if (bar) addTrade(bar, price, size, seq);
      else {
        bars.set(start, openBar(start, price, size, seq));
        this.nextCloseAt = Math.min(this.nextCloseAt, start + d + this.graceMs);
      }
    }
    this.close(out);
  }

  book(seq: number, symbol: string, ts: number, book: BookInput, out: DerivedEvent[]): void {
    this.advance(ts);
    const coin = this.coin(symbol);
    const start = assignedStart(ts, this.watermark, SECOND, this.graceMs);
    const open = coin.seconds.get(start);
    if (open) {
      open.events.push({ book, seq });
      open.lastSeq = seq;
    } else {
      coin.seconds.set(start, { events: [{ book, seq }], lastSeq: seq });
      this.nextCloseAt = Math.min(this.nextCloseAt, start + SECOND + this.graceMs);
    }
    this.close(out);
  }

  /** Any other event type still moves the watermark. */
  other(ts: number, out: DerivedEvent[]): void {
    this.advance(ts);
    this.close(out);
  }

  private advance(ts: number): void {
    if (ts > this.watermark) this.watermark = ts;
  }

  private coin(symbol: string): Coin {
    let coin = this.coins.get(symbol);
    if (!coin) {
      coin = {
        symbol,
        bars: { bar_1s: new Map(), bar_1m: new Map(), bar_1h: new Map() },
        book: new BookLevels(),
        seconds: new Map(),
      };
      this.coins.set(symbol, coin);
      this.ordered = [...this.coins.values()].sort((a, b) => (a.symbol < b.symbol ? -1 : 1));
    }
    return coin;
  }

  /** Emits every span the watermark has closed: coins in symbol order, kinds in contract order, by start. */
  private close(out: DerivedEvent[]): void {
    if (this.watermark < this.nextCloseAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const coin of this.ordered) {
      for (const kind of BAR_KINDS) {
        const d = DERIVED_DURATIONS_MS[kind];
        const bars = coin.bars[kind];
        for (const start of [...bars.keys()].sort((a, b) => a - b)) {
          if (!isClosed(start, d, this.watermark, this.graceMs)) {
            next = Math.min(next, start + d + this.graceMs);
            continue;
          }
          const bar = bars.get(start) as OpenBar;
          bars.delete(start);
          this.emit(kind, coin.symbol, start, out, () => finishBar(kind, this.source, coin.symbol, d, bar));
        }
      }
      for (const start of [...coin.seconds.keys()].sort((a, b) => a - b)) {
        if (!isClosed(start, SECOND, this.watermark, this.graceMs)) {
          next = Math.min(next, start + SECOND + this.graceMs);
          continue;
        }
        const second = coin.seconds.get(start) as OpenSecond;
        coin.seconds.delete(start);
        for (const e of second.events) coin.book.apply(e.book, e.seq);
        if (!coin.book.isEmpty())
          this.emit(SNAPSHOT_KIND, coin.symbol, start, out, () =>
            snapshot(this.source, coin, start + SECOND, second.lastSeq),
          );
      }
    }
    this.nextCloseAt = next;
  }

  private emit(
    kind: string,
    symbol: string,
    start: number,
    out: DerivedEvent[],
    make: () => DerivedEvent,
  ): void {
    const key = derivedSubject(this.source, symbol, kind);
    const floor = this.floors.get(key);
    if (floor !== undefined && start <= floor) return;
    this.floors.set(key, start);
    out.push(make());
  }
}

function snapshot(source: string, coin: Coin, end: number, lastSeq: number): BookSnapshotEvent {
  const { bids, asks } = coin.book.top(SNAPSHOT_DEPTH);
  const bestBid = bids[0]?.price ?? null;
  const bestAsk = asks[0]?.price ?? null;
  return {
    event_type: SNAPSHOT_KIND,
    source: source as Source,
    symbol: coin.symbol,
    timestamp_ms: end,
    bids,
    asks,
    best_bid: bestBid,
    best_ask: bestAsk,
    mid_price: bestBid !== null && bestAsk !== null ? (bestBid + bestAsk) / 2 : null,
    base_seq: coin.book.baseSeq,
    last_seq: lastSeq,
  };
}
