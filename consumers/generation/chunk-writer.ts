/**
 * Hands an `EventColumns` batch to DuckDB as one DataChunk: each fixed-width column is one
 * memory copy into its vector, each book side fills the list's child STRUCT vectors with two
 * copies plus the list entries, and only strings (trade ids) are assigned per row: per trade row,
 * since the other rows' slots are cleared to '' by one copy of zeros (a zero DuckDB string_t is
 * the inlined empty string), and the layout makes those slots NULL anyway.
 *
 * This uses `@duckdb/node-bindings` (the C API that `@duckdb/node-api` wraps and pins at its own
 * exact version) because node-api's typed vectors write lists of structs one JS value per cell,
 * several times slower than the copies here.
 */
import { endianness } from 'node:os';
import { DuckDBDataChunk } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { type EventColumns, KIND_TRADE, type LevelColumn } from './event-columns.ts';
import { STAGING_COLUMNS, STAGING_INDEX, type StagingColumn } from './layout.ts';

// int64 and list entries are written as little-endian 32-bit word pairs.
if (endianness() !== 'LE') throw new Error('generation needs a little-endian host');

/** Rows in a DuckDB vector (and so in a batch). */
export const VECTOR_SIZE: number = duckdb.vector_size();

/** Bytes of a DuckDB string_t (length, then 12 inlined bytes or a prefix and a pointer). */
const STRING_T_BYTES = 16;

/** A vector of zero string_t: all empty strings. */
const EMPTY_STRINGS = new Uint8Array(VECTOR_SIZE * STRING_T_BYTES);

/** A DataChunk with the staging table's column types. */
export const createStagingChunk = (): DuckDBDataChunk =>
  DuckDBDataChunk.create(STAGING_COLUMNS.map(([, type]) => type));

function copy(vector: duckdb.Vector, data: ArrayBufferView, bytes: number): void {
  if (bytes > 0) duckdb.copy_data_to_vector(vector, 0, data.buffer as ArrayBuffer, data.byteOffset, bytes);
}

function fillLevels(vector: duckdb.Vector, levels: LevelColumn, rows: number): void {
  duckdb.list_vector_reserve(vector, levels.count);
  duckdb.list_vector_set_size(vector, levels.count);
  const child = duckdb.list_vector_get_child(vector);
  copy(duckdb.struct_vector_get_child(child, 0), levels.price, levels.count * 8);
  copy(duckdb.struct_vector_get_child(child, 1), levels.size, levels.count * 8);
  copy(vector, levels.entries, rows * 16);
}

/** Fills `chunk` (from `createStagingChunk`) with the rows of `columns`. */
export function fillStagingChunk(chunk: DuckDBDataChunk, columns: EventColumns): void {
  const raw = chunk.chunk;
  const rows = columns.length;
  duckdb.data_chunk_reset(raw);
  const vector = (name: StagingColumn): duckdb.Vector =>
    duckdb.data_chunk_get_vector(raw, STAGING_INDEX[name]);
  copy(vector('kind'), columns.kind, rows);
  copy(vector('timestamp_ms'), columns.timestampMs, rows * 8);
  copy(vector('capture_time_ms'), columns.captureTimeMs, rows * 8);
  copy(vector('side'), columns.side, rows);
  copy(vector('price'), columns.price, rows * 8);
  copy(vector('size'), columns.size, rows * 8);
  const tradeIds = vector('trade_id');
  copy(tradeIds, EMPTY_STRINGS, rows * STRING_T_BYTES);
  const { kind, tradeId } = columns;
  for (let row = 0; row < rows; row++) {
    if (kind[row] === KIND_TRADE) duckdb.vector_assign_string_element(tradeIds, row, tradeId[row] as string);
  }
  copy(vector('notional_usd'), columns.notionalUsd, rows * 8);
  copy(vector('best_bid'), columns.bestBid, rows * 8);
  copy(vector('best_ask'), columns.bestAsk, rows * 8);
  copy(vector('mid_price'), columns.midPrice, rows * 8);
  copy(vector('spread_bps'), columns.spreadBps, rows * 8);
  fillLevels(vector('bids'), columns.bids, rows);
  fillLevels(vector('asks'), columns.asks, rows);
  duckdb.data_chunk_set_size(raw, rows);
}
