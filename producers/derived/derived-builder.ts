/**
 * The pure derived builder: stored `MD` events in stream order in, closed bars and snapshots out
 * (contracts/derived.ts). One `SourceBuilder` per source (each source has its own watermark).
 * No I/O and no clock: the same events from the same sequence give the same output.
 */
import { DERIVED_GRACE_MS, type DerivedEvent } from '../../contracts/derived.ts';
import type { BookLevel } from '../../contracts/events.ts';
import { type Floors, SourceBuilder } from './source-builder.ts';

/** The fields of a stored event the builder reads. */
export type StoredFields = {
  timestamp_ms?: unknown;
  price?: unknown;
  size?: unknown;
  bids?: unknown;
  asks?: unknown;
  is_snapshot?: unknown;
};

export class DerivedBuilder {
  private readonly sources = new Map<string, SourceBuilder>();

  /**
   * `floors`: per DERIVED subject, the start of the last span already published; spans at or
   * before it are not emitted again.
   */
  constructor(
    private readonly floors: Floors = new Map(),
    private readonly graceMs = DERIVED_GRACE_MS,
  ) {}

  /** One platform `MD` event (its subject's parts, its stored fields); returns what it closed. */
  push(seq: number, source: string, symbol: string, eventType: string, e: StoredFields): DerivedEvent[] {
    const out: DerivedEvent[] = [];
    const ts = e.timestamp_ms;
    if (typeof ts !== 'number' || !Number.isFinite(ts)) return out;
    const b = this.source(source);
    if (eventType === 'trade' && typeof e.price === 'number' && typeof e.size === 'number')
      b.trade(seq, symbol, ts, e.price, e.size, out);
    else if (eventType === 'book' && Array.isArray(e.bids) && Array.isArray(e.asks))
      b.book(
        seq,
        symbol,
        ts,
        {
          bids: e.bids as BookLevel[],
          asks: e.asks as BookLevel[],
          ...(e.is_snapshot === false ? { is_snapshot: false } : {}),
        },
        out,
      );
    else b.other(ts, out);
    return out;
  }

  private source(name: string): SourceBuilder {
    let b = this.sources.get(name);
    if (!b) {
      b = new SourceBuilder(name, this.floors, this.graceMs);
      this.sources.set(name, b);
    }
    return b;
  }
}
