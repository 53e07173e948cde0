/**
 * The mapper contract: one small mapper per source turns one source-native payload into zero or
 * more canonical events. Mappers are pure (no clock, no I/O, no state between payloads).
 */
import type { MarketEvent, Source } from '../../contracts/events.ts';

/** Bump when a mapping changes what a given payload produces (cached results key on it). */
export const NORMALIZER_VERSION = '2.0.0';

/** What a mapper knows besides the payload. */
export type MapContext = {
  /** The request's symbol: when set it overrides the symbol of every event, else fills it in. */
  readonly symbol: string | undefined;
  /**
   * When the platform received the payload, Unix ms: the event time of payloads that carry none
   * (Binance REST / partial depth, spot bookTicker), and their capture time.
   */
  readonly receivedAtMs: number;
};

/**
 * A source's mapper. `map` appends a payload's events to `out` as plain records: a payload may give
 * several (Hyperliquid trade batches, Databento tbbo) or none (funding context, off-book trades);
 * an unusable payload makes it throw a `NormalizeError` (what it appended before is the caller's
 * to drop). Appending, not a generator: a generator object and its protocol per payload were a
 * tenth of a Binance trade's normalization.
 */
export interface Mapper {
  readonly source: Source;
  map(payload: unknown, ctx: MapContext, out: MarketEvent[]): void;
}

/** A payload's events as an array (tests, one-off callers). */
export function mapAll(mapper: Mapper, payload: unknown, ctx: MapContext): MarketEvent[] {
  const out: MarketEvent[] = [];
  mapper.map(payload, ctx, out);
  return out;
}
