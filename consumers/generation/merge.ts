/**
 * Merges part files, in the given order, into the final Parquet artifact with its key-value
 * metadata. DuckDB keeps insertion order for a single `read_parquet` scan feeding `COPY`
 * (preserve_insertion_order, on by default), so rows come out in part order: window order,
 * then generation order inside each window.
 */
import { sqlString } from './layout.ts';
import { type DuckDBSettings, openDuckDB } from './part-writer.ts';

/** The artifact's key-value metadata (Parquet footer), as the spec requires. */
export type ArtifactMetadata = { job_id: string; manifest_hash: string; row_count: number };

/** Rows per row group of the artifact; fixed so the layout never depends on the DuckDB default. */
export const ROW_GROUP_SIZE = 122_880;

/**
 * Merges `parts` into `outPath` (ZSTD); throws if the rows copied differ from `row_count`. An
 * abort interrupts the running COPY (the caller removes the partial file).
 */
export async function mergeParts(
  parts: readonly string[],
  outPath: string,
  metadata: ArtifactMetadata,
  settings: DuckDBSettings = {},
  signal?: AbortSignal,
): Promise<void> {
  if (parts.length === 0) throw new Error('no part files to merge');
  signal?.throwIfAborted();
  const instance = await openDuckDB(settings);
  const connection = await instance.connect();
  const interrupt = (): void => connection.interrupt();
  signal?.addEventListener('abort', interrupt, { once: true });
  try {
    const kv = [
      `job_id: ${sqlString(metadata.job_id)}`,
      `manifest_hash: ${sqlString(metadata.manifest_hash)}`,
      `row_count: ${sqlString(String(metadata.row_count))}`,
    ].join(', ');
    const files = parts.map(sqlString).join(', ');
    const result = await connection.run(
      `COPY (SELECT * FROM read_parquet([${files}])) TO ${sqlString(outPath)} ` +
        `(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}, KV_METADATA {${kv}})`,
    );
    const copied = Number((await result.getRows())[0]?.[0]);
    if (copied !== metadata.row_count) {
      throw new Error(`merge copied ${copied} rows, expected ${metadata.row_count}`);
    }
  } finally {
    signal?.removeEventListener('abort', interrupt);
    connection.closeSync();
    instance.closeSync();
  }
}
