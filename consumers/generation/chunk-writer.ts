/**
 * Hands an `EventColumns` batch to DuckDB as one DataChunk: each fixed-width column is one
 * memory copy into its vector, each book side fills the list's child STRUCT vectors with two
 * copies plus the list entries, and only strings (trade ids) are assigned per row.
 *
 * This uses `@duckdb/node-bindings` (the C API that `@duckdb/node-api` wraps and pins at its own
 * exact version) because node-api's typed vectors write lists of structs one JS value per cell,
 * several times slower than the copies here.
 */
import { endianness } from 'node:os';
import { BIGINT, DOUBLE, DuckDBDataChunk, LIST, STRUCT, UTINYINT, VARCHAR } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { EventColumns, LevelColumn } from './event-columns.ts';

// int64 and list entries are written as little-endian 32-bit word pairs.
if (endianness() !== 'LE') throw new Error('generation needs a little-endian host');

const LEVEL = LIST(STRUCT({ price: DOUBLE, size: DOUBLE }));

/** DataChunk column types, in `STAGING_COLUMNS` order. */
const CHUNK_TYPES = [
  UTINYINT,
  BIGINT,
  BIGINT,
  UTINYINT,
  DOUBLE,
  DOUBLE,
  VARCHAR,
  DOUBLE,
  DOUBLE,
  DOUBLE,
  DOUBLE,
  DOUBLE,
  LEVEL,
  LEVEL,
];

/** Rows in a DuckDB vector (and so in a batch). */
export const VECTOR_SIZE: number = duckdb.vector_size();

/** A DataChunk with the staging table's column types. */
export const createStagingChunk = (): DuckDBDataChunk => DuckDBDataChunk.create(CHUNK_TYPES);

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
  const vector = (index: number): duckdb.Vector => duckdb.data_chunk_get_vector(raw, index);
  copy(vector(0), columns.kind, rows);
  copy(vector(1), columns.timestampMs, rows * 8);
  copy(vector(2), columns.captureTimeMs, rows * 8);
  copy(vector(3), columns.side, rows);
  copy(vector(4), columns.price, rows * 8);
  copy(vector(5), columns.size, rows * 8);
  const tradeIds = vector(6);
  for (let row = 0; row < rows; row++) {
    duckdb.vector_assign_string_element(tradeIds, row, columns.tradeId[row] as string);
  }
  copy(vector(7), columns.notionalUsd, rows * 8);
  copy(vector(8), columns.bestBid, rows * 8);
  copy(vector(9), columns.bestAsk, rows * 8);
  copy(vector(10), columns.midPrice, rows * 8);
  copy(vector(11), columns.spreadBps, rows * 8);
  fillLevels(vector(12), columns.bids, rows);
  fillLevels(vector(13), columns.asks, rows);
  duckdb.data_chunk_set_size(raw, rows);
}
