/**
 * Cheap hand-written field checks for the venue mappers' hot path (no zod there): each returns the
 * converted value or throws a `NormalizeError` naming the field.
 */
import { SymbolName } from '../../contracts/events.ts';
import { decimal } from '../../contracts/json-number.ts';
import { NormalizeError } from './errors.ts';
import type { MapContext } from './mapper.ts';

/** A JSON object (not null, not an array). */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** missing_field when absent, invalid_value otherwise. */
export function fieldError(value: unknown, field: string, expected: string): NormalizeError {
  if (value === undefined || value === null)
    return new NormalizeError('missing_field', `${field} is missing`, field);
  const shown = typeof value === 'string' ? `"${value.slice(0, 40)}"` : String(value).slice(0, 40);
  return new NormalizeError('invalid_value', `${field} must be ${expected}, got ${shown}`, field);
}

/** A JSON object field. */
export function object(value: unknown, field: string): Json {
  if (!isObject(value)) throw fieldError(value, field, 'an object');
  return value;
}

/** An array field. */
export function array(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw fieldError(value, field, 'an array');
  return value;
}

/**
 * A number, or a decimal string (venues send prices as strings to keep their digits) read as
 * `Number()` reads it, "" being NaN (contracts/json-number.ts `decimal`, the fast reader).
 */
export function toNumber(value: unknown): number {
  return typeof value === 'number' ? value : typeof value === 'string' ? decimal(value) : Number.NaN;
}

/** Whether `n` is a finite number > 0. */
export const isPositive = (n: number): boolean => n > 0 && n < Number.POSITIVE_INFINITY;

/** A finite number > 0 (price, size). */
export function positive(value: unknown, field: string): number {
  const n = toNumber(value);
  if (!isPositive(n)) throw fieldError(value, field, 'a positive number');
  return n;
}

/** A finite number ≥ 0 (a book level size, 0 meaning "no quantity"). */
export function nonNegative(value: unknown, field: string): number {
  const n = toNumber(value);
  if (!(n >= 0) || n === Number.POSITIVE_INFINITY) throw fieldError(value, field, 'a number >= 0');
  return n;
}

/** A non-negative integer id (JSON number) as text. */
export function integerId(value: unknown, field: string): string {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^\d{1,30}$/.test(value)) return value;
  throw fieldError(value, field, 'a non-negative integer');
}

/** Same character set as `TradeEvent.trade_id` after its `trd_` prefix (a test keeps them equal). */
export const TRADE_ID_BODY = /^[A-Za-z0-9_.:-]+$/;

/** A venue's free-text trade id, checked against the canonical trade_id character set. */
export function textId(value: unknown, field: string): string {
  if (typeof value === 'number') return integerId(value, field);
  if (typeof value !== 'string' || !TRADE_ID_BODY.test(value) || value.length > 120)
    throw fieldError(value, field, 'an id of letters, digits, "_", ".", ":" or "-"');
  return value;
}

/** Unix ms (a non-negative integer) from a millisecond field. */
export function epochMs(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw fieldError(value, field, 'Unix milliseconds (a non-negative integer)');
  return value;
}

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z$/;

/**
 * Unix ms, rounded down, from a nanosecond field: an integer string (exact: the last six digits are
 * dropped, no float rounding), a JSON number, or an ISO-8601 UTC string with up to 9 decimals.
 */
export function nsToMs(value: unknown, field: string): number {
  if (typeof value === 'string') {
    if (value.length > 6 && value.length <= 20 && /^\d+$/.test(value)) return Number(value.slice(0, -6));
    if (/^\d{1,6}$/.test(value)) return 0;
    const m = ISO.exec(value);
    if (m) {
      const ms = Date.parse(`${m[1]}Z`) + Number((m[2] ?? '').padEnd(3, '0').slice(0, 3));
      if (ms >= 0) return ms;
    }
  } else if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
    return Math.floor(value / 1e6);
  }
  throw fieldError(value, field, 'Unix nanoseconds (integer or integer string) or an ISO-8601 UTC time');
}

let lastSymbol = '';

/** Symbols already checked, so that interleaved symbols skip the zod check; emptied when full. */
const checkedSymbols = new Set<string>();
const MAX_CHECKED_SYMBOLS = 4_096;

/**
 * The event's symbol: the request's when given, else the payload's. Checked against the contract's
 * `SymbolName` once per distinct symbol (memoised: the last symbol seen costs one compare, another
 * recently checked one a set lookup).
 */
export function symbolOf(ctx: MapContext, raw: unknown, field: string): string {
  const symbol = ctx.symbol ?? raw;
  if (symbol === lastSymbol) return symbol;
  if (typeof symbol === 'string' && checkedSymbols.has(symbol)) {
    lastSymbol = symbol;
    return symbol;
  }
  if (symbol === undefined || symbol === null || symbol === '')
    throw new NormalizeError('missing_field', `${field} is missing and the request gives no symbol`, field);
  if (typeof symbol !== 'string') throw fieldError(symbol, field, 'a symbol string');
  if (!SymbolName.safeParse(symbol).success) {
    const fromRequest = ctx.symbol !== undefined;
    throw new NormalizeError(
      'invalid_value',
      `${fromRequest ? 'request symbol' : field} "${symbol.slice(0, 70)}" is not a canonical symbol ` +
        `(letters, digits, "@", "/", ":", "+", "_" or "-", at most 64)${fromRequest ? '' : '; pass a request symbol to name it'}`,
      fromRequest ? 'symbol' : field,
    );
  }
  if (checkedSymbols.size >= MAX_CHECKED_SYMBOLS) checkedSymbols.clear();
  checkedSymbols.add(symbol);
  lastSymbol = symbol;
  return symbol;
}

/**
 * `error` with its field put under `prefix` ("px …" → "data[2].px …"), so hot loops can use plain
 * field names and pay for the path only when something is wrong.
 */
export function within(prefix: string, error: unknown): unknown {
  if (!(error instanceof NormalizeError)) return error;
  const field = error.field === undefined ? prefix : `${prefix}.${error.field}`;
  const message =
    error.field !== undefined && error.message.startsWith(error.field)
      ? `${prefix}.${error.message}`
      : `${prefix}: ${error.message}`;
  return new NormalizeError(error.code, message, field);
}
