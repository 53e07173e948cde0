/** `POST /mcp/normalize` and the `normalize_events` tool: the request (spec "Normalize request"). */
import { z } from 'zod';
import { Source, SymbolName } from './events.ts';

/** Payloads per request: the 1 MB body limit binds first for all but the smallest payloads. */
export const MAX_NORMALIZE_EVENTS = 50_000;

export const NormalizeBody = z
  .object({
    source: Source,
    /** Fills or overrides every event's symbol. */
    symbol: SymbolName.optional(),
    events: z
      .array(z.object({ payload: z.unknown() }).strict())
      .min(1, 'give at least one event')
      .max(MAX_NORMALIZE_EVENTS, `at most ${MAX_NORMALIZE_EVENTS} events per request`),
    /** Publish the normalized events to the live market stream (they appear on the unified stream). */
    stream: z.boolean().default(false),
    /** Store the normalized events in a cache (replay, Parquet export); the key is returned. */
    enable_cache: z.boolean().default(false),
  })
  .strict();
export type NormalizeBody = z.output<typeof NormalizeBody>;
