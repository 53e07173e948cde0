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
 * A source's mapper. `map` is a generator of plain records: a payload may yield several events
 * (Hyperliquid trade batches, Databento tbbo) or none (funding context, off-book trades); an
 * unusable payload makes it throw a `NormalizeError`.
 */
export interface Mapper {
  readonly source: Source;
  map(payload: unknown, ctx: MapContext): Iterable<MarketEvent>;
}
