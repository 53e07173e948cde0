/**
 * The DuckDB merge the generation used before the stitch (issue 15), kept as the bench's baseline:
 * merges part files, in the given order, into the final Parquet artifact with its key-value
 * metadata. DuckDB keeps insertion order for a single `read_parquet` scan feeding `COPY`
 * (preserve_insertion_order, on by default), so rows come out in part order: window order,
 * then generation order inside each window.
 */
import type { ArtifactMetadata } from '../../consumers/generation/generate.ts';
import { sqlString } from '../../consumers/generation/layout.ts';
import { type DuckDBSettings, openDuckDB, ROW_GROUP_SIZE } from '../../consumers/generation/part-writer.ts';

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
