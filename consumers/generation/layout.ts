/**
 * The Parquet layout (documented in LAYOUT.md) and the DuckDB staging table behind it.
 *
 * Rows are staged in the shape the JS side can fill with plain memory copies (`EventColumns`):
 * event type and side as small integer codes, no NULLs. One projection turns a staged batch
 * into the published columns: codes become strings, slots that do not apply to the event type
 * become NULL, and `symbol`/`source` (constant per dataset) are written as literals.
 */

/** Staging table: column order is the DataChunk's (see `chunk-writer.ts`). */
export const STAGING_TABLE = 'staging';

const LEVEL_TYPE = 'STRUCT(price DOUBLE, size DOUBLE)[]';

/** Staging columns, in DataChunk order. */
export const STAGING_COLUMNS = [
  ['kind', 'UTINYINT'],
  ['timestamp_ms', 'BIGINT'],
  ['capture_time_ms', 'BIGINT'],
  ['side', 'UTINYINT'],
  ['price', 'DOUBLE'],
  ['size', 'DOUBLE'],
  ['trade_id', 'VARCHAR'],
  ['notional_usd', 'DOUBLE'],
  ['best_bid', 'DOUBLE'],
  ['best_ask', 'DOUBLE'],
  ['mid_price', 'DOUBLE'],
  ['spread_bps', 'DOUBLE'],
  ['bids', LEVEL_TYPE],
  ['asks', LEVEL_TYPE],
] as const;

/** `CREATE TABLE` of the staging table. */
export function stagingTableSql(): string {
  const columns = STAGING_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');
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

const trade = (column: string): string => `CASE WHEN kind = 0 THEN ${column} END AS ${column}`;
const book = (column: string): string => `CASE WHEN kind = 1 THEN ${column} END AS ${column}`;

/** The query that turns the staging table into published rows, in staging (generation) order. */
export function projectionSql(symbol: string, source: string): string {
  const columns = [
    "CASE kind WHEN 0 THEN 'trade' ELSE 'book' END AS event_type",
    'timestamp_ms',
    'capture_time_ms',
    `${sqlString(symbol)} AS symbol`,
    `${sqlString(source)} AS source`,
    "CASE side WHEN 1 THEN 'buy' WHEN 2 THEN 'sell' END AS side",
    ...['price', 'size', 'trade_id', 'notional_usd'].map(trade),
    ...['best_bid', 'best_ask', 'mid_price', 'spread_bps', 'bids', 'asks'].map(book),
  ];
  return `SELECT ${columns.join(', ')} FROM ${STAGING_TABLE}`;
}
