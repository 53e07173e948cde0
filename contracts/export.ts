/**
 * `POST /data/export` and the MCP tool `export_range`: stored market events of a time range as a
 * Parquet or CSV file, written by DuckDB as an asynchronous job on the `JOBS` work queue (the
 * generation jobs' queue, records and artifacts: contracts/jobs.ts). `from` and `to` select by
 * the time `MD` stored each event (as a replay by time does), both included. Pure: no I/O.
 */
import { z } from 'zod';
import { randomBase62 } from './api-key-format.ts';
import { EVENT_TYPES, SOURCES, SymbolName } from './events.ts';

/** Coins one export may name. */
export const EXPORT_MAX_COINS = 20;
/** Longest range one export may cover, ms (31 days). */
export const EXPORT_MAX_RANGE_MS = 31 * 86_400_000;
/** Stored events (every coin) one export may scan between `from` and `to`. */
export const EXPORT_MAX_SCANNED = 50_000_000;
/** Rows one export may write; a job that reaches more fails with a message saying so. */
export const EXPORT_MAX_ROWS = 10_000_000;

export const EXPORT_FORMATS = ['parquet', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** An instant: Unix milliseconds (number or digits) or ISO 8601 with a time zone. */
export const ExportInstant = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = typeof v === 'number' ? String(v) : v.trim();
  const ms =
    typeof v === 'number'
      ? v
      : /^\d{1,16}$/.test(s)
        ? Number(s)
        : /^\d{4}-\d{2}-\d{2}T.+(Z|[+-]\d{2}:?\d{2})$/i.test(s)
          ? Date.parse(s)
          : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > 8_640_000_000_000) {
    ctx.addIssue({
      code: 'custom',
      message: 'must be whole Unix milliseconds or ISO 8601 with a time zone, e.g. 2026-01-01T09:00:00Z',
    });
    return z.NEVER;
  }
  return ms;
});

const unique = <T>(values: readonly T[]) => new Set(values).size === values.length;

export const ExportRequest = z
  .object({
    coins: z
      .array(SymbolName)
      .min(1, 'name at least one coin')
      .max(EXPORT_MAX_COINS, `at most ${EXPORT_MAX_COINS} coins`)
      .refine(unique, 'each coin once')
      .describe(`Coins (symbols), e.g. ["BTC","ETH"]; at most ${EXPORT_MAX_COINS}.`),
    sources: z
      .array(z.enum(SOURCES))
      .min(1)
      .refine(unique, 'each source once')
      .optional()
      .describe('Sources to keep; default: every source.'),
    event_types: z
      .array(z.enum(EVENT_TYPES))
      .min(1)
      .refine(unique, 'each event type once')
      .optional()
      .describe('Event types to keep (trade, book); default: both.'),
    from: ExportInstant.describe('Start, included: Unix ms or ISO 8601 (stored time of the stream).'),
    to: ExportInstant.describe('End, included: Unix ms or ISO 8601; not in the future.'),
    format: z.enum(EXPORT_FORMATS).default('parquet').describe('parquet (default) or csv.'),
  })
  .strict();
export type ExportRequest = z.output<typeof ExportRequest>;

/** The selection an export job reads: sorted, so that the same request is the same job. */
export type ExportSelection = {
  coins: string[];
  sources: string[] | null;
  event_types: string[] | null;
  /** The account whose own events are included besides the platform's (null: none). */
  account_id: string | null;
};

export const EXPORT_JOB_SUBJECT = 'jobs.export';

/** An export job's id: its artifact is `<id>.<format>`. */
export const newExportJobId = (): string => `export_${randomBase62(16)}`;

/** On the `JOBS` queue: what an export worker reads, already resolved to stream positions. */
export type ExportJobMessage = {
  job_id: string;
  selection: ExportSelection;
  format: ExportFormat;
  from_ms: number;
  to_ms: number;
  /** First and last stream sequence of the range (`first_seq > last_seq`: empty). */
  first_seq: number;
  last_seq: number;
  request_hash: string;
  requested_at: number;
};

/**
 * The file's columns, in order (the same in Parquet and CSV). Types are DuckDB's; in CSV, `bids`
 * and `asks` are JSON text (`[{"price":…,"size":…},…]`).
 */
export const EXPORT_COLUMNS = [
  ['seq', 'BIGINT'],
  ['stored_ms', 'BIGINT'],
  ['owner', 'VARCHAR'],
  ['source', 'VARCHAR'],
  ['symbol', 'VARCHAR'],
  ['event_type', 'VARCHAR'],
  ['timestamp_ms', 'BIGINT'],
  ['capture_time_ms', 'BIGINT'],
  ['side', 'VARCHAR'],
  ['price', 'DOUBLE'],
  ['size', 'DOUBLE'],
  ['notional_usd', 'DOUBLE'],
  ['trade_id', 'VARCHAR'],
  ['venue_trade_id', 'VARCHAR'],
  ['bids', 'STRUCT(price DOUBLE, size DOUBLE)[]'],
  ['asks', 'STRUCT(price DOUBLE, size DOUBLE)[]'],
  ['best_bid', 'DOUBLE'],
  ['best_ask', 'DOUBLE'],
  ['mid_price', 'DOUBLE'],
  ['spread_bps', 'DOUBLE'],
  ['is_snapshot', 'BOOLEAN'],
] as const;

/** Version of the column layout, written in the Parquet metadata (`export_layout`). */
export const EXPORT_LAYOUT_VERSION = '1';
