/**
 * Query and resume position of `GET /api/v1/unified/stream`, validated with zod. Unknown
 * parameters and values are refused with field details (400, core/validate.ts); a position must
 * be a stream sequence.
 */
import { z } from 'zod';
import { EventType, Source, SymbolName } from '../../contracts/events.ts';
import { parseWith } from '../core/validate.ts';

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

/** The `Last-Event-ID` header wins over `last_event_id`: EventSource sends the header on reconnect. */
export function parseStreamRequest(
  query: unknown,
  lastEventIdHeader: string | string[] | undefined,
): StreamRequest {
  const q = parseWith(UnifiedStreamQuery, query ?? {}, 'text');
  let lastEventId = q.last_event_id ?? null;
  const header = Array.isArray(lastEventIdHeader) ? lastEventIdHeader[0] : lastEventIdHeader;
  if (header !== undefined && header.trim() !== '')
    lastEventId = parseWith(position, header.trim(), 'text', 'Last-Event-ID');
  return {
    coins: q.coin ? [...new Set(q.coin)] : null,
    eventTypes: q.event_type ?? null,
    sources: q.source ?? null,
    lastEventId,
  };
}
