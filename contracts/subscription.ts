/**
 * What a client asks a market-data stream for, on every transport: coins, event types, sources
 * and a resume position. The SSE query (comma lists, `Last-Event-ID`), JSON-RPC filter params,
 * gRPC requests and WebSocket subscribe messages are each parsed into this one shape; turning it
 * into a Selection (coins resolved, sources checked against the key) is the gateways' core's job
 * (gateways/core/subscribe.ts). An absent list means "all".
 */
import { z } from 'zod';
import { DERIVED_KINDS, isDerivedKind } from './derived.ts';
import { EVENT_TYPES, Source, SymbolName } from './events.ts';
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

/**
 * A stream's position as an SSE id: `N` (the `MD` sequence), or `N:K` once the stream has delivered
 * an account's own event (K its `OWN` sequence).
 */
export const FeedPositionText = z
  .string()
  .regex(
    /^\d{1,16}(:\d{1,16})?$/,
    'must be the id of the last event received: a stream sequence N, or N:K with an own sequence',
  )
  .transform((s) => s.split(':').map(Number))
  .pipe(z.tuple([StreamPosition, StreamPosition]).or(z.tuple([StreamPosition])))
  .transform(([md, own]) => ({ last_event_id: md, ...(own !== undefined ? { last_own_seq: own } : {}) }));
export type FeedPositionText = z.infer<typeof FeedPositionText>;

const AT_LEAST_ONE = 'give at least one value';
export const CoinList = z
  .array(SymbolName)
  .min(1, AT_LEAST_ONE)
  .max(MAX_COINS_PER_SUBSCRIPTION, `at most ${MAX_COINS_PER_SUBSCRIPTION} coins per subscription`);
/**
 * What a stream may select: the market events of `MD` (`trade`, `book`), or the derived series of
 * `DERIVED` (`bar_1s`, `bar_1m`, `bar_1h`, `book_snapshot_10_1s`; contracts/derived.ts), which
 * live in a stream of their own with its own sequence: never both in one subscription, and never
 * in the default selection (no event type named: `MD`'s events only).
 */
export const StreamEventType = z.enum([...EVENT_TYPES, ...DERIVED_KINDS] as [string, ...string[]]);
export const EventTypeList = z
  .array(StreamEventType)
  .min(1, AT_LEAST_ONE)
  .refine(
    (types) => types.every(isDerivedKind) || !types.some(isDerivedKind),
    'derived series (bar_1s, bar_1m, bar_1h, book_snapshot_10_1s) come from a stream of their own: ask for them without trade or book',
  );
export const SourceList = z.array(Source).min(1, AT_LEAST_ONE);

/** An instant as Unix milliseconds (a replay's `from` and `to`). */
export const TimeMs = z
  .number()
  .int('must be whole Unix milliseconds')
  .min(0, 'must be at or after 1970-01-01')
  .max(8_640_000_000_000, 'is past the largest date');

/** An instant written as text: ISO 8601 with a time zone, or Unix milliseconds. */
export const TimeText = z
  .string()
  .trim()
  .transform((s, ctx) => {
    const ms = /^\d{1,16}$/.test(s)
      ? Number(s)
      : /^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:?\d{2})$/i.test(s)
        ? Date.parse(s)
        : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({ code: 'custom', message: 'must be ISO 8601 with a time zone, or Unix milliseconds' });
      return z.NEVER;
    }
    return Math.floor(ms);
  })
  .pipe(TimeMs);

/** Replay pace: `max` as fast as the transport allows, N: the recorded gaps divided by N. */
export const ReplaySpeed = z.union([
  z.literal('max'),
  z.number().min(0.01, 'must be at least 0.01').max(10_000, 'must be at most 10000'),
]);
export type ReplaySpeed = z.infer<typeof ReplaySpeed>;

/** A replay speed written as text (`max` or a number). */
export const ReplaySpeedText = z
  .string()
  .trim()
  .transform((s) => (s === 'max' ? s : s === '' ? Number.NaN : Number(s)))
  .pipe(ReplaySpeed);

/** `to_ms` at or after `from_ms`. */
const rangeInOrder = (s: { from_ms?: number; to_ms?: number }) =>
  s.from_ms === undefined || s.to_ms === undefined || s.to_ms >= s.from_ms;
const RANGE_ORDER = { message: 'to must be at or after from', path: ['to_ms'] };

export const Subscription = z
  .object({
    /** Coins (symbols) wanted; unknown ones are reported (`coin_not_found`), the rest delivered. */
    coins: CoinList.optional(),
    event_types: EventTypeList.optional(),
    /** Sources wanted; within what the key's `chain:*` scopes allow. */
    sources: SourceList.optional(),
    /** Resume after this stream sequence; absent: live events only. Wins over `from_ms`. */
    last_event_id: StreamPosition.optional(),
    /**
     * Resume the account's own events (`OWN`, events marked `"own":true`) after this `OWN`
     * sequence. Absent: after the last own event stored by the time of the platform event
     * `last_event_id` names (gateways/core/own-feed.ts). Alone (a stream whose only events so far
     * were own ones), the platform's feed starts live.
     */
    last_own_seq: StreamPosition.optional(),
    /** Replay from the first event the stream stored at or after this instant. */
    from_ms: TimeMs.optional(),
    /** End after the last event the stream stored at or before this instant (`replay_complete`). */
    to_ms: TimeMs.optional(),
    /** Pace of the replay (default `max`). */
    speed: ReplaySpeed.optional(),
  })
  .strict()
  .refine(rangeInOrder, RANGE_ORDER);
export type Subscription = z.infer<typeof Subscription>;
