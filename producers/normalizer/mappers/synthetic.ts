// /work/shared/SPEC.md "Trade event", "L2 book snapshot" (the platform's own canonical format)
/**
 * Synthetic: payloads already in the canonical schema (the simulator's output), validated with zod.
 * `source`, `capture_time_ms` (defaults to timestamp_ms) and the derived fields may be left out;
 * derived fields are recomputed, and a given value is kept only when it agrees with the
 * recomputation to rounding (1e-9 relative; notional also 1e-8 USD), so canonical events
 * round-trip bit for bit. Optional fields (`venue_trade_id`, `is_snapshot`) are kept when given and
 * never added: the event stays as it was sent.
 */
import { z } from 'zod';
import { BookEvent, TradeEvent } from '../../../contracts/events.ts';
import { book, trade } from '../canonical.ts';
import { NormalizeError } from '../errors.ts';
import { fieldError, isObject, symbolOf } from '../fields.ts';
import type { Mapper } from '../mapper.ts';

const derived = z.number().nullable().optional();
const loose = {
  source: z.literal('synthetic', { error: 'must be "synthetic" (the request source) when given' }).optional(),
  symbol: z.string().optional(), // checked after the request symbol is applied
  capture_time_ms: TradeEvent.shape.capture_time_ms.optional(),
};
const SyntheticTrade = TradeEvent.extend({ ...loose, notional_usd: derived });
const SyntheticBook = BookEvent.extend({
  ...loose,
  best_bid: derived,
  best_ask: derived,
  mid_price: derived,
  spread_bps: derived,
});

/** `given` when within rounding of `computed`, else `computed` (null when there is nothing to compute). */
function agreed<T extends number | null>(given: number | null | undefined, computed: T, absolute: number): T {
  if (given === undefined || given === null || computed === null) return computed;
  return (
    Math.abs(given - computed) <= Math.max(absolute, 1e-9 * Math.abs(computed)) ? given : computed
  ) as T;
}

function valueAt(payload: unknown, path: readonly PropertyKey[]): unknown {
  let value = payload;
  for (const key of path) value = isObject(value) || Array.isArray(value) ? (value as never)[key] : undefined;
  return value;
}

function toNormalizeError(payload: unknown, error: z.ZodError): NormalizeError {
  const issue = error.issues[0] as z.core.$ZodIssue;
  const field = issue.path.map(String).join('.');
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  if (issue.code === 'unrecognized_keys')
    return new NormalizeError('invalid_value', `unexpected field(s) ${issue.keys.join(', ')}${more}`, field);
  const code = valueAt(payload, issue.path) === undefined ? 'missing_field' : 'invalid_value';
  const message = code === 'missing_field' ? `${field} is missing` : `${field}: ${issue.message}`;
  return new NormalizeError(code, `${message}${more}`, field);
}

/** Size 0 deletes a level, so it belongs to diffs only (`is_snapshot: false`). */
function checkNoEmptyLevel(levels: readonly { size: number }[], field: string): void {
  for (let i = 0; i < levels.length; i++)
    if ((levels[i] as { size: number }).size === 0)
      throw new NormalizeError(
        'invalid_value',
        `${field}.${i}.size: size 0 is only allowed in a diff (is_snapshot: false)`,
        `${field}.${i}.size`,
      );
}

export const syntheticMapper: Mapper = {
  source: 'synthetic',
  map(payload, ctx, events) {
    if (!isObject(payload)) throw fieldError(payload, 'payload', 'a canonical event object');
    if (payload.event_type === 'trade') {
      const parsed = SyntheticTrade.safeParse(payload);
      if (!parsed.success) throw toNormalizeError(payload, parsed.error);
      const t = parsed.data;
      const symbol = symbolOf(ctx, t.symbol, 'symbol');
      const id = t.trade_id.slice('trd_'.length);
      const { venue_trade_id: _venueId, ...out } = trade(
        'synthetic',
        symbol,
        t.timestamp_ms,
        t.capture_time_ms ?? t.timestamp_ms,
        t.side,
        t.price,
        t.size,
        id,
      );
      out.notional_usd = agreed(t.notional_usd, out.notional_usd, 1e-8);
      events.push(t.venue_trade_id === undefined ? out : { ...out, venue_trade_id: t.venue_trade_id });
    } else if (payload.event_type === 'book') {
      const parsed = SyntheticBook.safeParse(payload);
      if (!parsed.success) throw toNormalizeError(payload, parsed.error);
      const b = parsed.data;
      if (b.is_snapshot !== false) {
        checkNoEmptyLevel(b.bids, 'bids');
        checkNoEmptyLevel(b.asks, 'asks');
      }
      const symbol = symbolOf(ctx, b.symbol, 'symbol');
      const out = book(
        'synthetic',
        symbol,
        b.timestamp_ms,
        b.capture_time_ms ?? b.timestamp_ms,
        b.bids,
        b.asks,
        b.is_snapshot,
      );
      out.mid_price = agreed(b.mid_price, out.mid_price, 0);
      out.spread_bps = agreed(b.spread_bps, out.spread_bps, 1e-9);
      events.push(out);
    } else {
      throw fieldError(payload.event_type, 'event_type', '"trade" or "book"');
    }
  },
};
