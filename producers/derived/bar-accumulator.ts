/** One open trade bar: trades added in `MD` order, then finished into the published event. */
import type { BarEvent, BarKind } from '../../contracts/derived.ts';
import type { Source } from '../../contracts/events.ts';

export type OpenBar = {
  start: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  notional: number;
  count: number;
  firstSeq: number;
  lastSeq: number;
};

export const openBar = (start: number, price: number, size: number, seq: number): OpenBar => ({
  start,
  open: price,
  high: price,
  low: price,
  close: price,
  volume: size,
  notional: price * size,
  count: 1,
  firstSeq: seq,
  lastSeq: seq,
});

/** Adds a trade; `seq` is larger than every one added before (MD order). */
export function addTrade(bar: OpenBar, price: number, size: number, seq: number): void {
  if (price > bar.high) bar.high = price;
  if (price < bar.low) bar.low = price;
  bar.close = price;
  bar.volume += size;
  bar.notional += price * size;
  bar.count++;
  bar.lastSeq = seq;
}

/** The published bar (fields in the contract's order). */
export function finishBar(
  kind: BarKind,
  source: string,
  symbol: string,
  durationMs: number,
  bar: OpenBar,
): BarEvent {
  const end = bar.start + durationMs;
  return {
    event_type: kind,
    source: source as Source,
    symbol,
    start_ms: bar.start,
    end_ms: end,
    open: bar.open,
    high: bar.high,
    low: bar.low,
    close: bar.close,
    volume: bar.volume,
    notional: bar.notional,
    trade_count: bar.count,
    vwap: bar.notional / bar.volume,
    first_seq: bar.firstSeq,
    last_seq: bar.lastSeq,
    timestamp_ms: end,
  };
}
