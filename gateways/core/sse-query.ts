/**
 * The SSE spelling of a Subscription (contracts/subscription.ts): comma lists in the query
 * (`coin`, `event_type`, `source`), the resume position in the `Last-Event-ID` header or the
 * `last_event_id` query value, a replay by time (`from`, `to` as ISO 8601 or Unix ms, `speed`).
 * Unknown parameters are ignored (a cache-buster such as `_=123` must not break a stream); bad values of known ones are refused with field details (400,
 * validate.ts). `lastEventIdOf` is shared by every SSE route (unified stream, cache replay, live sessions).
 */
import { z } from 'zod';
import {
  CoinList,
  EventTypeList,
  FeedPositionText,
  ReplaySpeedText,
  SourceList,
  StreamPositionText,
  Subscription,
  TimeText,
} from '../../contracts/subscription.ts';
import { parseWith } from './validate.ts';

const commaList = <T extends z.ZodType<unknown, string[]>>(list: T) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(list);

/** The SSE query, parsed with the contract's item schemas. */
export const SseSubscriptionQuery = z
  .object({
    coin: commaList(CoinList).optional(),
    event_type: commaList(EventTypeList).optional(),
    source: commaList(SourceList).optional(),
    last_event_id: z.string().optional(),
    /** A replay by time: ISO 8601 or Unix ms. */
    from: TimeText.optional(),
    to: TimeText.optional(),
    speed: ReplaySpeedText.optional(),
  })
  // Unknown keys are dropped, not refused.
  .strip();

/** The resume position of an SSE request: the `Last-Event-ID` header wins (EventSource sends it). */
export function lastEventIdOf(
  header: string | string[] | undefined,
  fromQuery: number | undefined = undefined,
): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return fromQuery;
  return parseWith(StreamPositionText, value.trim(), 'text', 'Last-Event-ID');
}

/**
 * The unified stream's resume position (`N`, or `N:K` with an own position: own-feed.ts): the
 * `Last-Event-ID` header wins over the query value.
 */
function feedPositionOf(
  header: string | string[] | undefined,
  fromQuery: string | undefined,
): FeedPositionText | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value) return parseWith(FeedPositionText, value, 'text', 'Last-Event-ID');
  return fromQuery === undefined
    ? undefined
    : parseWith(FeedPositionText, fromQuery.trim(), 'text', 'last_event_id');
}

/** A Subscription from an SSE request's query and `Last-Event-ID` header. */
export function parseSseSubscription(
  query: unknown,
  lastEventIdHeader: string | string[] | undefined,
): Subscription {
  const q = parseWith(SseSubscriptionQuery, query ?? {}, 'text');
  const position = feedPositionOf(lastEventIdHeader, q.last_event_id);
  return parseWith(
    Subscription,
    {
      ...(q.coin ? { coins: [...new Set(q.coin)] } : {}),
      ...(q.event_type ? { event_types: q.event_type } : {}),
      ...(q.source ? { sources: q.source } : {}),
      ...position,
      ...(q.from !== undefined ? { from_ms: q.from } : {}),
      ...(q.to !== undefined ? { to_ms: q.to } : {}),
      ...(q.speed !== undefined ? { speed: q.speed } : {}),
    },
    'text',
  );
}
