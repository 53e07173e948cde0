/**
 * Query and resume position of `GET /api/v1/unified/stream`, validated with zod. Unknown
 * parameters and values are refused with field details; a position must be a stream sequence.
 */
import { z } from 'zod';
import { ApiError } from '../../contracts/errors.ts';
import { EventType, Source, SymbolName } from '../../contracts/events.ts';

const commaList = <T extends z.ZodType<string, string>>(item: T) =>
  z
    .string()
    .transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(item).min(1, 'give at least one value'));

const position = z
  .string()
  .regex(/^\d{1,16}$/, 'must be a non-negative integer stream sequence (the id of the last event received)')
  .transform(Number)
  .refine(Number.isSafeInteger, 'is larger than any stream sequence can be');

export const UnifiedStreamQuery = z
  .object({
    coin: commaList(SymbolName).optional(),
    event_type: commaList(EventType).optional(),
    source: commaList(Source).optional(),
    last_event_id: position.optional(),
  })
  .strict();

export type StreamRequest = {
  coins: string[] | null;
  eventTypes: string[] | null;
  sources: string[] | null;
  /** Resume after this stream sequence; null = live only. */
  lastEventId: number | null;
};

function invalid(issues: z.core.$ZodIssue[], fieldOverride?: string): ApiError {
  const first = issues[0];
  const field =
    fieldOverride ??
    (first?.code === 'unrecognized_keys' ? first.keys.join(',') : String(first?.path[0] ?? 'query'));
  const reason =
    first?.code === 'unrecognized_keys'
      ? 'unknown query parameter (allowed: coin, event_type, source, last_event_id)'
      : (first?.message ?? 'invalid');
  return new ApiError('invalid_params', `invalid ${field}: ${reason}`, { field, reason });
}

/** The `Last-Event-ID` header wins over `last_event_id`: EventSource sends the header on reconnect. */
export function parseStreamRequest(
  query: unknown,
  lastEventIdHeader: string | string[] | undefined,
): StreamRequest {
  const q = UnifiedStreamQuery.safeParse(query ?? {});
  if (!q.success) throw invalid(q.error.issues);
  let lastEventId = q.data.last_event_id ?? null;
  const header = Array.isArray(lastEventIdHeader) ? lastEventIdHeader[0] : lastEventIdHeader;
  if (header !== undefined && header.trim() !== '') {
    const h = position.safeParse(header.trim());
    if (!h.success) throw invalid(h.error.issues, 'Last-Event-ID');
    lastEventId = h.data;
  }
  return {
    coins: q.data.coin ? [...new Set(q.data.coin)] : null,
    eventTypes: q.data.event_type ?? null,
    sources: q.data.source ?? null,
    lastEventId,
  };
}
