/**
 * The request side of the tardis-machine-compatible endpoints (gateways/unified/tardis/): the `options`
 * query parameter of `/replay-normalized`, `/ws-replay-normalized` and `/ws-stream-normalized`, as
 * tardis-machine's public documentation describes it: one object or an array of them, each
 * `{exchange, symbols?, from, to, dataTypes, withDisconnectMessages?}` (no `from`/`to` on the
 * stream endpoint). `exchange` is one of our sources; `symbols` are our coins. Data types served:
 * `trade`, `book_change`, `book_snapshot_{depth}_{interval}{ms|s|m}` and
 * `trade_bar_{n}{ms|s|m|ticks|vol}`; anything else is refused by name.
 */
import { z } from 'zod';
import { SOURCES, SymbolName } from './events.ts';
import { MAX_COINS_PER_SUBSCRIPTION } from './transport-limits.ts';

/** One computed or mapped data type, as parsed from its name. */
export type TardisDataType =
  | { kind: 'trade' }
  | { kind: 'book_change' }
  | { kind: 'trade_bar'; name: string; bar: 'time' | 'tick' | 'volume'; interval: number }
  | { kind: 'book_snapshot'; name: string; depth: number; interval: number };

const TIME_UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000 };
/** Deepest book snapshot served (our books carry at most this many levels a side). */
export const TARDIS_MAX_SNAPSHOT_DEPTH = 50;
/** Most options objects in one request. */
export const TARDIS_MAX_OPTIONS = 10;

export function parseDataType(name: string): TardisDataType | null {
  if (name === 'trade' || name === 'book_change') return { kind: name };
  const bar = /^trade_bar_(\d{1,9})(ms|s|m|ticks|vol)$/.exec(name);
  if (bar) {
    const n = Number(bar[1]);
    const unit = bar[2] as string;
    if (n <= 0) return null;
    if (unit === 'ticks') return { kind: 'trade_bar', name, bar: 'tick', interval: n };
    if (unit === 'vol') return { kind: 'trade_bar', name, bar: 'volume', interval: n };
    return { kind: 'trade_bar', name, bar: 'time', interval: n * (TIME_UNIT_MS[unit] as number) };
  }
  const snap = /^book_snapshot_(\d{1,3})_(\d{1,9})(ms|s|m)$/.exec(name);
  if (snap) {
    const depth = Number(snap[1]);
    if (depth < 1 || depth > TARDIS_MAX_SNAPSHOT_DEPTH) return null;
    const interval = Number(snap[2]) * (TIME_UNIT_MS[snap[3] as string] as number);
    return { kind: 'book_snapshot', name, depth, interval };
  }
  return null;
}

const DataTypeName = z
  .string()
  .refine(
    (s) => parseDataType(s) !== null,
    `must be trade, book_change, book_snapshot_{depth 1-${TARDIS_MAX_SNAPSHOT_DEPTH}}_{interval}{ms|s|m} or trade_bar_{n}{ms|s|m|ticks|vol}`,
  );

/** An instant as tardis writes it: an ISO 8601 date or date-time (UTC when no zone is given). */
const TardisDate = z.string().transform((s, ctx) => {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(s)
    ? `${s}T00:00:00Z`
    : /T.*(Z|[+-]\d{2}:?\d{2})$/i.test(s)
      ? s
      : `${s}Z`;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) {
    ctx.addIssue({ code: 'custom', message: 'must be an ISO 8601 date or date-time' });
    return z.NEVER;
  }
  return ms;
});

const OptionsBase = z.object({
  exchange: z.enum(SOURCES),
  symbols: z.array(SymbolName).min(1).max(MAX_COINS_PER_SUBSCRIPTION).optional(),
  dataTypes: z.array(DataTypeName).min(1, 'give at least one data type').max(20),
  withDisconnectMessages: z.boolean().optional(),
  withErrorMessages: z.boolean().optional(),
  timeoutIntervalMS: z.number().int().nonnegative().optional(),
});

export const ReplayOptions = OptionsBase.extend({ from: TardisDate, to: TardisDate })
  .strict()
  .refine((o) => o.to > o.from, { message: 'to must be after from', path: ['to'] });
export type ReplayOptions = z.infer<typeof ReplayOptions>;

export const StreamOptions = OptionsBase.strict();
export type StreamOptions = z.infer<typeof StreamOptions>;

const oneOrMany = <T extends z.ZodType>(one: T) =>
  z
    .union([one, z.array(one).min(1).max(TARDIS_MAX_OPTIONS)])
    .transform((v) => (Array.isArray(v) ? v : [v]) as z.output<T>[]);

export const ReplayRequest = oneOrMany(ReplayOptions).refine(
  (list) => list.every((o) => o.from === list[0]?.from && o.to === list[0]?.to),
  { message: 'every options object of one request must have the same from and to' },
);
export const StreamRequest = oneOrMany(StreamOptions);
