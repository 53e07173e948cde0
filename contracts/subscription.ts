/**
 * What a client asks a market-data stream for, on every transport: coins, event types, sources
 * and a resume position. The SSE query (comma lists, `Last-Event-ID`), JSON-RPC filter params,
 * gRPC requests and WebSocket subscribe messages are each parsed into this one shape; turning it
 * into a Selection (coins resolved, sources checked against the key) is the gateways' core's job
 * (gateways/core/subscribe.ts). An absent list means "all".
 */
import { z } from 'zod';
import { EventType, Source, SymbolName } from './events.ts';
import { MAX_COINS_PER_SUBSCRIPTION } from './transport-limits.ts';

/**
 * A position in a stream: the JetStream stream sequence of the last event the client received
 * (the SSE id). Resuming delivers the events after it.
 */
export const StreamPosition = z
  .number()
  .int('must be an integer stream sequence')
  .nonnegative('must be a non-negative stream sequence (the id of the last event received)')
  .refine(Number.isSafeInteger, 'is larger than any stream sequence can be');

/** A stream position written as text (a header or a query value). */
export const StreamPositionText = z
  .string()
  .regex(/^\d{1,16}$/, 'must be a non-negative integer stream sequence (the id of the last event received)')
  .transform(Number)
  .pipe(StreamPosition);

const AT_LEAST_ONE = 'give at least one value';
export const CoinList = z
  .array(SymbolName)
  .min(1, AT_LEAST_ONE)
  .max(MAX_COINS_PER_SUBSCRIPTION, `at most ${MAX_COINS_PER_SUBSCRIPTION} coins per subscription`);
export const EventTypeList = z.array(EventType).min(1, AT_LEAST_ONE);
export const SourceList = z.array(Source).min(1, AT_LEAST_ONE);

export const Subscription = z
  .object({
    /** Coins (symbols) wanted; unknown ones are reported (`coin_not_found`), the rest delivered. */
    coins: CoinList.optional(),
    event_types: EventTypeList.optional(),
    /** Sources wanted; within what the key's `chain:*` scopes allow. */
    sources: SourceList.optional(),
    /** Resume after this stream sequence; absent: live events only. */
    last_event_id: StreamPosition.optional(),
  })
  .strict();
export type Subscription = z.infer<typeof Subscription>;
