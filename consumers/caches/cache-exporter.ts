/**
 * Cache → Parquet with DuckDB, in bounded memory: events stream from JetStream into a temporary
 * NDJSON file (respecting the file's backpressure), then DuckDB's own reader turns it into a ZSTD
 * Parquet file with the cache's provenance in the key-value metadata. The caller streams the
 * file and removes it. One row per event, in stream order; books keep their levels as
 * LIST<STRUCT<price DOUBLE, size DOUBLE>>.
 */

import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { CacheManifest } from '../../contracts/caches.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import type { Nats } from '../../platform/nats.ts';
import { readCache } from './cache-reader.ts';

const LEVEL = 'STRUCT(price DOUBLE, size DOUBLE)[]';
const COLUMNS: Record<string, string> = {
  seq: 'BIGINT',
  event_type: 'VARCHAR',
  source: 'VARCHAR',
  symbol: 'VARCHAR',
  timestamp_ms: 'BIGINT',
  capture_time_ms: 'BIGINT',
  side: 'VARCHAR',
  price: 'DOUBLE',
  size: 'DOUBLE',
  trade_id: 'VARCHAR',
  venue_trade_id: 'VARCHAR',
  notional_usd: 'DOUBLE',
  bids: LEVEL,
  asks: LEVEL,
  best_bid: 'DOUBLE',
  best_ask: 'DOUBLE',
  mid_price: 'DOUBLE',
  spread_bps: 'DOUBLE',
  is_snapshot: 'BOOLEAN',
};

const sql = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** DuckDB's COPY of an NDJSON file of cached events to ZSTD Parquet with key-value metadata. */
export function ndjsonToParquetSql(
  ndjsonPath: string,
  parquetPath: string,
  metadata: Record<string, string>,
): string {
  const columns = Object.entries(COLUMNS)
    .map(([k, t]) => `${k}: ${sql(t)}`)
    .join(', ');
  const meta = Object.entries(metadata)
    .map(([k, v]) => `${k}: ${sql(v)}`)
    .join(', ');
  return (
    `COPY (SELECT * FROM read_json(${sql(ndjsonPath)}, format = 'newline_delimited', columns = {${columns}})) ` +
    `TO ${sql(parquetPath)} (FORMAT PARQUET, COMPRESSION ZSTD, KV_METADATA {${meta}})`
  );
}

export type ExportedCache = { path: string; bytes: number; rows: number; cleanup(): Promise<void> };

export async function exportCache(
  nats: Nats,
  manifest: CacheManifest,
  signal?: AbortSignal,
): Promise<ExportedCache> {
  const dir = await mkdtemp(join(tmpdir(), 'mdp-export-'));
  const cleanup = () => rm(dir, { recursive: true, force: true });
  try {
    const ndjson = join(dir, 'events.ndjson');
    const out = createWriteStream(ndjson);
    let rows = 0;
    for await (const { json } of readCache(nats, manifest, undefined, signal)) {
      if (!out.write(`${json}\n`)) await once(out, 'drain');
      rows++;
    }
    out.end();
    await once(out, 'finish');
    const path = join(dir, `${manifest.cache_key}.parquet`);
    const db = await DuckDBInstance.create(':memory:', { threads: '1' });
    const conn = await db.connect();
    try {
      const kv = {
        cache_key: manifest.cache_key,
        content_hash: manifest.content_hash,
        row_count: String(rows),
        source: manifest.source,
        normalizer_version: manifest.normalizer_version,
      };
      await conn.run(ndjsonToParquetSql(ndjson, path, kv));
    } finally {
      conn.closeSync();
      db.closeSync();
    }
    await rm(ndjson);
    return { path, bytes: (await stat(path)).size, rows, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Name of a cache's export in the artifact store. */
export const cacheExportName = (cacheKey: string): string => `cache-exports/${cacheKey}.parquet`;

/**
 * The Parquet file of a cache, exported once and kept in the artifact store (local or NATS, so
 * any gateway finds an export another one made): a cache key is derived from the content, so a
 * cache's export never changes. The store makes it visible only once whole.
 */
export async function exportedCacheFile(
  nats: Nats,
  manifest: CacheManifest,
  store: ArtifactStore,
): Promise<{ name: string; bytes: number }> {
  const name = cacheExportName(manifest.cache_key);
  const existing = await store.stat(name);
  if (existing) return { name, bytes: existing.size };
  const fresh = await exportCache(nats, manifest);
  try {
    return { name, bytes: await store.put(name, createReadStream(fresh.path)) };
  } finally {
    await fresh.cleanup();
  }
}
