/**
 * Canonical market events: exactly the spec's trade and L2 book fields, plus `source`.
 * Every producer (simulator, normalizer) emits these; every gateway serves them.
 */
import { z } from 'zod';

/** Where an event came from. `synthetic` is the simulator. */
export const SOURCES = ['synthetic', 'hyperliquid', 'binance', 'cme', 'sgx'] as const;
export const Source = z.enum(SOURCES);
export type Source = z.infer<typeof Source>;

export const EVENT_TYPES = ['trade', 'book'] as const;
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;

/**
 * A symbol is one NATS subject token (no dots, wildcards or spaces). Venue spellings such as
 * Hyperliquid's spot `@162` or `PURR/USDC` are kept as they are.
 */
export const SymbolName = z
  .string()
  .regex(
    /^[A-Za-z0-9@][A-Za-z0-9_@/:+-]{0,63}$/,
    'letters, digits, "@", "/", ":", "+", "_" or "-", at most 64 characters',
  );

/**
 * Aggressor (taker) side: `buy` means the buyer lifted the offer. `unknown` only when the venue
 * says there was none (Databento side `N`); the simulator always sets one.
 */
export const Side = z.enum(['buy', 'sell', 'unknown']);
export type Side = z.infer<typeof Side>;

const epochMs = z.number().int().nonnegative();
const positive = z.number().positive().finite();

export const TradeEvent = z
  .object({
    event_type: z.literal('trade'),
    source: Source,
    symbol: SymbolName,
    /** Exchange (event) time, Unix ms. */
    timestamp_ms: epochMs,
    /** When the platform captured the event, Unix ms; never before `timestamp_ms` for simulated data. */
    capture_time_ms: epochMs,
    side: Side,
    /** Quote currency per unit. */
    price: positive,
    /** Base units. */
    size: positive,
    trade_id: z.string().regex(/^trd_[A-Za-z0-9_.:-]+$/),
    /** price × size, USD. */
    notional_usd: z.number().nonnegative().finite(),
    /** The venue's own trade id (or message sequence where the venue has none), when normalized. */
    venue_trade_id: z.string().optional(),
  })
  .strict();
export type TradeEvent = z.infer<typeof TradeEvent>;

/** Size 0 appears only in diffs (`is_snapshot: false`), where it deletes the level. */
export const BookLevel = z.object({ price: positive, size: z.number().nonnegative().finite() }).strict();
export type BookLevel = z.infer<typeof BookLevel>;

export const BookEvent = z
  .object({
    event_type: z.literal('book'),
    source: Source,
    symbol: SymbolName,
    timestamp_ms: epochMs,
    capture_time_ms: epochMs,
    /** Best first, descending prices. */
    bids: z.array(BookLevel),
    /** Best first, ascending prices. */
    asks: z.array(BookLevel),
    /** Null for a diff or a one-sided book. */
    best_bid: positive.nullable(),
    best_ask: positive.nullable(),
    mid_price: positive.nullable(),
    /** (best_ask − best_bid) / mid × 10,000; null when either side is missing. */
    spread_bps: z.number().nonnegative().finite().nullable(),
    /** True for full or top-N books, false for diffs (normalized venue data; the simulator sends snapshots). */
    is_snapshot: z.boolean().optional(),
  })
  .strict();
export type BookEvent = z.infer<typeof BookEvent>;

export const MarketEvent = z.discriminatedUnion('event_type', [TradeEvent, BookEvent]);
export type MarketEvent = z.infer<typeof MarketEvent>;

/**
 * What travels on NATS (MessagePack): the event plus producer timestamps in µs, so that
 * latency can be measured end to end.
 */
export type MarketEnvelope = MarketEvent & {
  /** When the producer created or received the event, Unix µs. */
  ingest_us: number;
  /** When the producer published it, Unix µs. */
  publish_us: number;
};

/** Deterministic event id, used as `Nats-Msg-Id` so that a retried publish is never stored twice. */
export function eventId(event: MarketEvent, index: number): string {
  return `${event.source}.${event.symbol}.${event.event_type}.${index}`;
}

/** A book with both sides present: what the simulator produces (never a diff). */
export type BookSnapshot = BookEvent & {
  best_bid: number;
  best_ask: number;
  mid_price: number;
  spread_bps: number;
};

/** An event of the simulator: its books are always snapshots. */
export type SimulatedEvent = TradeEvent | BookSnapshot;
