/**
 * DuckDB adapter that streams events into Parquet part files: events → `EventColumns` batches →
 * DataChunks appended to an in-memory staging table → `COPY (projection) TO part.parquet`, then
 * the staging table is emptied. Parts are ZSTD with row groups of ROW_GROUP_SIZE rows: the
 * stitch (stitch.ts) copies them into the artifact unchanged. A part holds at most `rowsPerPart` rows (whole batches), so the
 * memory a window needs is bounded whatever its length.
 *
 * One writer owns one DuckDB instance with one thread: parallelism comes from running one writer
 * per worker thread, as measured in ARCHITECTURE.md ("parallelise by writing part files").
 */
import { setImmediate } from 'node:timers/promises';
import { type DuckDBAppender, type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { createStagingChunk, fillStagingChunk, VECTOR_SIZE } from './chunk-writer.ts';
import { type ColumnEvent, type DatasetConstants, EventColumns } from './event-columns.ts';
import { projectionSql, STAGING_TABLE, sqlString, stagingTableSql } from './layout.ts';

/** Rows per row group; fixed so the layout never depends on the DuckDB default. */
export const ROW_GROUP_SIZE = 122_880;

/**
 * Default rows per part file: 120 DuckDB vectors, two full row groups (about 60 MB staged at 10
 * levels a side). Row groups close at vector boundaries, and 122,880 is 60 vectors.
 */
export const DEFAULT_ROWS_PER_PART = 2 * ROW_GROUP_SIZE;

/**
 * Parts are stitched into the artifact as they are (their column chunks are copied byte for
 * byte), so they carry the artifact's codec.
 */
const PART_COMPRESSION = 'ZSTD';

/** DuckDB settings of a writer (strings, as DuckDB takes them). */
export type DuckDBSettings = { threads?: number; memoryLimit?: string; tempDirectory?: string };

/** Opens a DuckDB in-memory instance with the given settings. */
export async function openDuckDB(settings: DuckDBSettings = {}): Promise<DuckDBInstance> {
  const options: Record<string, string> = { threads: String(settings.threads ?? 1) };
  if (settings.memoryLimit) options.memory_limit = settings.memoryLimit;
  if (settings.tempDirectory) options.temp_directory = settings.tempDirectory;
  return DuckDBInstance.create(':memory:', options);
}

/** What to write: the events, their constant columns, and where each part goes. */
export type PartWriteRequest = {
  readonly events: Iterable<ColumnEvent>;
  readonly constants: DatasetConstants;
  /** Path of the part number `segment` (0, 1, ...). */
  readonly partPath: (segment: number) => string;
  readonly rowsPerPart?: number;
  /** Expected levels per book side (book_depth), to size the batch once. */
  readonly levelsHint?: number;
  /** Called after each batch is staged, with the rows staged so far; may throw to abort. */
  readonly afterBatch?: (rows: number) => void;
};

/** Rows written and the part files, in order. */
export type PartWriteResult = { rows: number; parts: string[] };

/** Streams events into Parquet part files through one DuckDB connection. */
export class ParquetPartWriter {
  private readonly chunk = createStagingChunk();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(settings: DuckDBSettings = {}): Promise<ParquetPartWriter> {
    const instance = await openDuckDB(settings);
    return new ParquetPartWriter(instance, await instance.connect());
  }

  /** Writes the events as one or more part files; on error the parts written so far remain. */
  async write(request: PartWriteRequest): Promise<PartWriteResult> {
    const rowsPerPart = request.rowsPerPart ?? DEFAULT_ROWS_PER_PART;
    const columns = new EventColumns(request.constants, VECTOR_SIZE, request.levelsHint);
    const select = projectionSql(request.constants.symbol, request.constants.source);
    const parts: string[] = [];
    let rows = 0;
    let staged = 0;
    let appender = await this.resetStaging();
    const stageBatch = (): void => {
      fillStagingChunk(this.chunk, columns);
      appender.appendDataChunk(this.chunk);
      staged += columns.length;
      rows += columns.length;
      columns.clear();
      request.afterBatch?.(rows);
    };
    const writePart = async (): Promise<void> => {
      appender.closeSync();
      const path = request.partPath(parts.length);
      await this.connection.run(
        `COPY (${select}) TO ${sqlString(path)} (FORMAT PARQUET, COMPRESSION ${PART_COMPRESSION}, ROW_GROUP_SIZE ${ROW_GROUP_SIZE})`,
      );
      parts.push(path);
      staged = 0;
      appender = await this.resetStaging();
    };
    try {
      for (const event of request.events) {
        columns.append(event);
        if (!columns.full) continue;
        stageBatch();
        if (staged >= rowsPerPart) await writePart();
        // Generation is synchronous CPU work: let timers and I/O run between batches (a few ms).
        else await setImmediate();
      }
      if (columns.length > 0) stageBatch();
      if (staged > 0) await writePart();
      return { rows, parts };
    } finally {
      closeQuietly(appender);
    }
  }

  /** Releases the DuckDB instance. */
  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }

  private async resetStaging(): Promise<DuckDBAppender> {
    await this.connection.run(stagingTableSql());
    return this.connection.createAppender(STAGING_TABLE);
  }
}

function closeQuietly(appender: DuckDBAppender): void {
  try {
    appender.closeSync();
  } catch {
    // Already closed after the last part; a failed write discards its staging table anyway.
  }
}
