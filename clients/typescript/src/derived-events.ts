/**
 * Narrowing a stream's event to a derived one (contracts/derived.ts): `isBar` for `bar_1s`,
 * `bar_1m`, `bar_1h`, `isBookSnapshot` for `book_snapshot_10_1s`. They look at `event_type` only,
 * the field every event of every transport carries; no Node-only import (browsers use them too).
 */
import { BAR_KINDS, type BarKind, SNAPSHOT_KIND } from '@mdp/contracts/derived';
import type { OhlcvInterval } from './jsonrpc.ts';
import type {
  AnyStreamEvent,
  BarStreamEvent,
  BookSnapshotStreamEvent,
  DerivedStreamEvent,
} from './stream-types.ts';

const BARS: ReadonlySet<string> = new Set<string>(BAR_KINDS);

/** A trade bar (`bar_1s`, `bar_1m`, `bar_1h`). */
export const isBar = (ev: AnyStreamEvent): ev is BarStreamEvent => BARS.has(ev.event_type);

/** A `book_snapshot_10_1s`. */
export const isBookSnapshot = (ev: AnyStreamEvent): ev is BookSnapshotStreamEvent =>
  ev.event_type === SNAPSHOT_KIND;

/** A bar or a book snapshot: an event of the `DERIVED` stream, whose `seq` is a `DERIVED` sequence. */
export const isDerived = (ev: AnyStreamEvent): ev is DerivedStreamEvent => isBar(ev) || isBookSnapshot(ev);

/** The bar kind of an `md_ohlcv` interval (`1m` → `bar_1m`), the `eventTypes` that streams it live. */
export const barKindOf = (interval: OhlcvInterval): BarKind => `bar_${interval}`;
