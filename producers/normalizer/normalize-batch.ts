/**
 * The normalization core behind `POST /mcp/normalize`: each element's payload through its source's
 * mapper, in input order. A bad element is rejected on its own (with its index and a code) and
 * never stops the batch; only an unknown source (or a non-array `events`) throws.
 */
import type { MarketEvent } from '../../contracts/events.ts';
import { isNormalizeError, NormalizeError, type NormalizeErrorCode } from './errors.ts';
import type { MapContext } from './mapper.ts';
import { mapperFor } from './registry.ts';

/** The request's fields that matter here (the spec's `stream` / `enable_cache` are the caller's). */
export type NormalizeRequest = {
  /** One of contracts' SOURCES. */
  readonly source: string;
  /** Overrides (or fills in) every event's symbol; empty means not given. */
  readonly symbol?: string | undefined;
  readonly events: ReadonlyArray<{ readonly payload: unknown }>;
};

export type NormalizeOptions = {
  /** When the payloads were received, Unix ms (default: now): time of payloads that carry none. */
  readonly receivedAtMs?: number;
};

/** One element that produced no events. */
export type RejectedEvent = {
  /** Index in `request.events`. */
  readonly index: number;
  readonly error: NormalizeErrorCode;
  readonly message: string;
};

export type NormalizeResult = {
  /** Canonical events in input order; one payload may give several or none. */
  readonly events: MarketEvent[];
  readonly rejected: RejectedEvent[];
};

function rejection(index: number, error: unknown): RejectedEvent {
  if (isNormalizeError(error)) return { index, error: error.code, message: error.message };
  const detail = error instanceof Error ? error.message : String(error);
  return { index, error: 'internal', message: `unexpected mapper failure: ${detail.slice(0, 200)}` };
}

/** Normalizes a batch. An element's events are all or nothing: if it fails midway none are kept. */
export function normalizeBatch(request: NormalizeRequest, options: NormalizeOptions = {}): NormalizeResult {
  const mapper = mapperFor(request.source);
  const items = request.events;
  if (!Array.isArray(items)) throw new NormalizeError('invalid_request', 'events must be an array', 'events');
  const ctx: MapContext = {
    symbol: request.symbol === '' || request.symbol === null ? undefined : request.symbol,
    receivedAtMs: options.receivedAtMs ?? Date.now(),
  };
  const events: MarketEvent[] = [];
  const rejected: RejectedEvent[] = [];
  for (let index = 0; index < items.length; index++) {
    const item: unknown = items[index];
    const start = events.length;
    try {
      if (typeof item !== 'object' || item === null || !('payload' in item) || item.payload === undefined)
        throw new NormalizeError('missing_field', `events[${index}].payload is missing`, 'payload');
      mapper.map(item.payload, ctx, events);
    } catch (error) {
      events.length = start;
      rejected.push(rejection(index, error));
    }
  }
  return { events, rejected };
}
