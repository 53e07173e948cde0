/**
 * Columnar batch builder: market events → typed column vectors, one slot per row, at most
 * `capacity` rows (a DuckDB vector). Book levels go to flat price/size arrays with a DuckDB list
 * entry (offset, length) per row, so a chunk is handed to DuckDB as a few memory copies instead
 * of one JS value per cell.
 *
 * Slots that do not apply to a row's event type hold 0 (or an empty list, or ''): the staging
 * layout (`layout.ts`) turns them into NULL by event type, so no validity masks are written.
 */
import type { BookLevel, MarketEvent, Source } from '../../contracts/events.ts';
import type { PackedBook } from '../../producers/simulator/market.ts';

/** What a batch takes: a contract event, or a model book whose levels are still packed. */
export type ColumnEvent = MarketEvent | PackedBook;

/** `kind` codes. */
export const KIND_TRADE = 0;
export const KIND_BOOK = 1;
/** `side` codes (0 for books). */
export const SIDE_BUY = 1;
export const SIDE_SELL = 2;

const TWO32 = 4_294_967_296;

/** Columns that are the same on every row of a dataset. */
export type DatasetConstants = { readonly symbol: string; readonly source: Source };

/** LIST<STRUCT<price, size>> of one side of the book, for every row of the batch. */
export class LevelColumn {
  /** DuckDB list entries: (offset, length) as two little-endian uint64 per row, in 32-bit words. */
  readonly entries: Uint32Array;
  price: Float64Array;
  size: Float64Array;
  /** Levels stored so far (child rows). */
  count = 0;

  constructor(capacity: number, levelsHint: number) {
    this.entries = new Uint32Array(capacity * 4);
    this.price = new Float64Array(Math.max(1, capacity * levelsHint));
    this.size = new Float64Array(this.price.length);
  }

  /** Stores `levels` as row `row`'s list (an empty list when undefined). */
  set(row: number, levels: readonly BookLevel[] | undefined): void {
    const n = levels?.length ?? 0;
    if (this.count + n > this.price.length) this.grow(this.count + n);
    const at = row * 4;
    this.entries[at] = this.count; // offset (a batch holds < 2^32 levels: high word stays 0)
    this.entries[at + 2] = n; // length
    for (let j = 0; j < n; j++) {
      const level = (levels as readonly BookLevel[])[j] as BookLevel;
      this.price[this.count] = level.price;
      this.size[this.count++] = level.size;
    }
  }

  /** Stores `n` levels from `prices`/`sizes` at `from` as row `row`'s list. */
  setPacked(row: number, prices: Float64Array, sizes: Float64Array, from: number, n: number): void {
    if (this.count + n > this.price.length) this.grow(this.count + n);
    const at = row * 4;
    let count = this.count;
    this.entries[at] = count;
    this.entries[at + 2] = n;
    const price = this.price;
    const size = this.size;
    for (let j = from; j < from + n; j++) {
      price[count] = prices[j] as number;
      size[count++] = sizes[j] as number;
    }
    this.count = count;
  }

  private grow(needed: number): void {
    const length = Math.max(needed, 2 * this.price.length);
    const price = new Float64Array(length);
    const size = new Float64Array(length);
    price.set(this.price.subarray(0, this.count));
    size.set(this.size.subarray(0, this.count));
    this.price = price;
    this.size = size;
  }
}

/** A batch of rows in columns. Integers (ms) are stored as little-endian int64 word pairs. */
export class EventColumns {
  length = 0;
  readonly kind: Uint8Array;
  readonly side: Uint8Array;
  /** int64 Unix ms as (low, high) 32-bit words. */
  readonly timestampMs: Uint32Array;
  readonly captureTimeMs: Uint32Array;
  readonly price: Float64Array;
  readonly size: Float64Array;
  readonly notionalUsd: Float64Array;
  readonly tradeId: string[];
  readonly bestBid: Float64Array;
  readonly bestAsk: Float64Array;
  readonly midPrice: Float64Array;
  readonly spreadBps: Float64Array;
  readonly bids: LevelColumn;
  readonly asks: LevelColumn;

  /**
   * @param constants symbol and source of every event (the layout writes them as literals)
   * @param capacity rows per batch: DuckDB's vector size
   * @param levelsHint expected levels per book side, to size the level arrays once
   */
  constructor(
    readonly constants: DatasetConstants,
    readonly capacity: number,
    levelsHint = 10,
  ) {
    const f64 = () => new Float64Array(capacity);
    this.kind = new Uint8Array(capacity);
    this.side = new Uint8Array(capacity);
    this.timestampMs = new Uint32Array(capacity * 2);
    this.captureTimeMs = new Uint32Array(capacity * 2);
    this.price = f64();
    this.size = f64();
    this.notionalUsd = f64();
    this.tradeId = new Array<string>(capacity).fill('');
    this.bestBid = f64();
    this.bestAsk = f64();
    this.midPrice = f64();
    this.spreadBps = f64();
    this.bids = new LevelColumn(capacity, levelsHint);
    this.asks = new LevelColumn(capacity, levelsHint);
  }

  get full(): boolean {
    return this.length >= this.capacity;
  }

  /** Empties the batch (the arrays are reused). */
  clear(): void {
    this.length = 0;
    this.bids.count = 0;
    this.asks.count = 0;
  }

  /** Appends one event as the next row; throws when full or of another symbol or source. */
  append(event: ColumnEvent): void {
    if (this.full) throw new RangeError('EventColumns is full');
    const { symbol, source } = this.constants;
    if (event.symbol !== symbol || event.source !== source) {
      throw new Error(`event of ${event.source}/${event.symbol} in a ${source}/${symbol} batch`);
    }
    const row = this.length++;
    setInt64(this.timestampMs, row, event.timestamp_ms);
    setInt64(this.captureTimeMs, row, event.capture_time_ms);
    if (event.event_type === 'trade') {
      this.kind[row] = KIND_TRADE;
      this.side[row] = event.side === 'buy' ? SIDE_BUY : SIDE_SELL;
      this.price[row] = event.price;
      this.size[row] = event.size;
      this.notionalUsd[row] = event.notional_usd;
      this.tradeId[row] = event.trade_id;
      this.bids.set(row, undefined);
      this.asks.set(row, undefined);
      return;
    }
    this.kind[row] = KIND_BOOK;
    this.side[row] = 0;
    this.tradeId[row] = '';
    // Generated books are snapshots with both sides: these are never null here.
    this.bestBid[row] = event.best_bid as number;
    this.bestAsk[row] = event.best_ask as number;
    this.midPrice[row] = event.mid_price as number;
    this.spreadBps[row] = event.spread_bps as number;
    if ('levels' in event) {
      const { levels, at } = event;
      this.bids.setPacked(row, levels.bidPrice, levels.bidSize, at, event.bidCount);
      this.asks.setPacked(row, levels.askPrice, levels.askSize, at, event.askCount);
      return;
    }
    this.bids.set(row, event.bids);
    this.asks.set(row, event.asks);
  }
}

/** Writes a non-negative safe integer as a little-endian int64 (two 32-bit words) at `row`. */
function setInt64(words: Uint32Array, row: number, value: number): void {
  words[2 * row] = value >>> 0;
  words[2 * row + 1] = Math.floor(value / TWO32);
}
