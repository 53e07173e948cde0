/**
 * Derived market data: trade bars and top-of-book snapshots, built from `MD` by the derived
 * producer (producers/derived/) and stored on the `DERIVED` stream under
 * `dv.<source>.<symbol>.<kind>` (contracts/subjects.ts). Both are pure functions of the stored
 * `MD` events (no wall clock): the same `MD` always gives the same bytes.
 *
 * Bars close on event time: a bar [start_ms, end_ms) is published once the source's watermark
 * (the highest `timestamp_ms` seen among that source's events) reaches `end_ms + DERIVED_GRACE_MS`.
 * An event whose bar is already closed is counted in the first bar still open.
 */
import { z } from 'zod';
import { Source, SymbolName } from './events.ts';

/** The derived kinds and the span each covers, ms. */
export const DERIVED_DURATIONS_MS = {
  bar_1s: 1_000,
  bar_1m: 60_000,
  bar_1h: 3_600_000,
  book_snapshot_10_1s: 1_000,
} as const;

export type DerivedKind = keyof typeof DERIVED_DURATIONS_MS;
export const DERIVED_KINDS = Object.keys(DERIVED_DURATIONS_MS) as DerivedKind[];
export const BAR_KINDS = ['bar_1s', 'bar_1m', 'bar_1h'] as const;
export type BarKind = (typeof BAR_KINDS)[number];
export const SNAPSHOT_KIND = 'book_snapshot_10_1s' as const;
/** Levels per side of a snapshot. */
export const SNAPSHOT_DEPTH = 10;

/** How far the source's event time must pass a bar's end before it is published, ms. */
export const DERIVED_GRACE_MS = 2_000;

export const isDerivedKind = (s: string): s is DerivedKind => Object.hasOwn(DERIVED_DURATIONS_MS, s);

const epochMs = z.number().int().nonnegative();
const seq = z.number().int().positive();
const positive = z.number().positive().finite();

/** One trade bar. `timestamp_ms` = `end_ms` (exclusive end). Fields in this order on the wire. */
export const BarEvent = z
  .object({
    event_type: z.enum(BAR_KINDS),
    source: Source,
    symbol: SymbolName,
    start_ms: epochMs,
    end_ms: epochMs,
    /** First and last trade of the bar in `MD` order (stream sequence). */
    open: positive,
    high: positive,
    low: positive,
    close: positive,
    /** Σ size. */
    volume: z.number().nonnegative().finite(),
    /** Σ price × size. */
    notional: z.number().nonnegative().finite(),
    trade_count: z.number().int().positive(),
    /** notional / volume. */
    vwap: positive,
    /** Lowest and highest `MD` stream sequence of the trades counted. */
    first_seq: seq,
    last_seq: seq,
    timestamp_ms: epochMs,
  })
  .strict();
export type BarEvent = z.infer<typeof BarEvent>;

const Level = z.object({ price: positive, size: positive }).strict();

/** The book (depth 10) as of a second's end; `timestamp_ms` is that end. */
export const BookSnapshotEvent = z
  .object({
    event_type: z.literal(SNAPSHOT_KIND),
    source: Source,
    symbol: SymbolName,
    timestamp_ms: epochMs,
    /** Best first. */
    bids: z.array(Level).max(SNAPSHOT_DEPTH),
    asks: z.array(Level).max(SNAPSHOT_DEPTH),
    best_bid: positive.nullable(),
    best_ask: positive.nullable(),
    mid_price: positive.nullable(),
    /**
     * The `MD` sequence the levels are built from: the last full book (snapshot) applied, or the
     * first diff when no full book has come since the read began. A restarted producer re-reads
     * from here: a diff-fed book (Binance) is rebuilt from its base, not from a diff.
     */
    base_seq: seq,
    /** Highest `MD` stream sequence of the book events applied. */
    last_seq: seq,
  })
  .strict();
export type BookSnapshotEvent = z.infer<typeof BookSnapshotEvent>;

export const DerivedEvent = z.union([BarEvent, BookSnapshotEvent]);
export type DerivedEvent = BarEvent | BookSnapshotEvent;

/** The start of the span a derived event covers (a snapshot's second starts 1 s before its timestamp). */
export const derivedStartMs = (e: DerivedEvent): number =>
  e.event_type === SNAPSHOT_KIND ? e.timestamp_ms - DERIVED_DURATIONS_MS[SNAPSHOT_KIND] : e.start_ms;
