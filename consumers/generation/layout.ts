/**
 * The Parquet layout (documented in LAYOUT.md) and the DuckDB staging table behind it.
 *
 * Rows are staged in the shape the JS side can fill with plain memory copies (`EventColumns`):
 * event type and side as small integer codes, no NULLs. One projection turns a staged batch
 * into the published columns: codes become strings, slots that do not apply to the event type
 * become NULL, and `symbol`/`source` (constant per dataset) are written as literals.
 */
import { BIGINT, DOUBLE, type DuckDBType, LIST, STRUCT, UTINYINT, VARCHAR } from '@duckdb/node-api';
import { KIND_BOOK, KIND_TRADE, SIDE_BUY, SIDE_SELL } from './event-columns.ts';

/** Staging table name. */
export const STAGING_TABLE = 'staging';

const LEVELS = LIST(STRUCT({ price: DOUBLE, size: DOUBLE }));

/** Staging columns and their types, in table and DataChunk order. */
export const STAGING_COLUMNS = [
  ['kind', UTINYINT],
  ['timestamp_ms', BIGINT],
  ['capture_time_ms', BIGINT],
  ['side', UTINYINT],
  ['price', DOUBLE],
  ['size', DOUBLE],
  ['trade_id', VARCHAR],
  ['notional_usd', DOUBLE],
  ['best_bid', DOUBLE],
  ['best_ask', DOUBLE],
  ['mid_price', DOUBLE],
  ['spread_bps', DOUBLE],
  ['bids', LEVELS],
  ['asks', LEVELS],
] as const satisfies readonly (readonly [string, DuckDBType])[];

/** A staging column's name. */
export type StagingColumn = (typeof STAGING_COLUMNS)[number][0];

/** Position of each staging column in the table and in the DataChunk. */
export const STAGING_INDEX = Object.fromEntries(STAGING_COLUMNS.map(([name], i) => [name, i])) as Record<
  StagingColumn,
  number
>;

/** `CREATE TABLE` of the staging table. */
export function stagingTableSql(): string {
  const columns = STAGING_COLUMNS.map(([name, type]) => `${name} ${type.toString()}`).join(', ');
  return `CREATE OR REPLACE TABLE ${STAGING_TABLE} (${columns})`;
}

/** A SQL string literal. */
export const sqlString = (text: string): string => `'${text.replaceAll("'", "''")}'`;

/** Published columns, in file order (one row per event). */
export const OUTPUT_COLUMNS = [
  'event_type',
  'timestamp_ms',
  'capture_time_ms',
  'symbol',
  'source',
  'side',
  'price',
  'size',
  'trade_id',
  'notional_usd',
  'best_bid',
  'best_ask',
  'mid_price',
  'spread_bps',
  'bids',
  'asks',
] as const;

const trade = (column: string): string => `CASE WHEN kind = ${KIND_TRADE} THEN ${column} END AS ${column}`;
const book = (column: string): string => `CASE WHEN kind = ${KIND_BOOK} THEN ${column} END AS ${column}`;

/** The query that turns the staging table into published rows, in staging (generation) order. */
export function projectionSql(symbol: string, source: string): string {
  const columns = [
    `CASE kind WHEN ${KIND_TRADE} THEN 'trade' ELSE 'book' END AS event_type`,
    'timestamp_ms',
    'capture_time_ms',
    `${sqlString(symbol)} AS symbol`,
    `${sqlString(source)} AS source`,
    `CASE side WHEN ${SIDE_BUY} THEN 'buy' WHEN ${SIDE_SELL} THEN 'sell' END AS side`,
    ...['price', 'size', 'trade_id', 'notional_usd'].map(trade),
    ...['best_bid', 'best_ask', 'mid_price', 'spread_bps', 'bids', 'asks'].map(book),
  ];
  return `SELECT ${columns.join(', ')} FROM ${STAGING_TABLE}`;
}
