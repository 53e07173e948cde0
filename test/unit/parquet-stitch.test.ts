/**
 * The Parquet stitch: the Thrift compact footer codec round-trips DuckDB's footers byte for byte;
 * stitched DuckDB parts read back (with DuckDB and with hyparquet) as the parts' rows in order,
 * ZSTD as written, with the key-value metadata; and a generated dataset has the same rows for
 * any worker count and window size.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { footerStart } from '../../consumers/generation/parquet-footer.ts';
import { localPart, planStitch, type StitchPart, stitchBytes } from '../../consumers/generation/stitch.ts';
import { readStruct, writeStruct } from '../../consumers/generation/thrift-compact.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';

type Row = Record<string, unknown>;

let dir: string;
let db: DuckDBInstance;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'parquet-stitch-'));
  db = await DuckDBInstance.create(':memory:', { threads: '1' });
});
afterAll(async () => {
  db.closeSync();
  await rm(dir, { recursive: true, force: true });
});

const sql = (s: string) => `'${s.replaceAll("'", "''")}'`;

async function query(text: string): Promise<unknown[][]> {
  const connection = await db.connect();
  try {
    return (await connection.runAndReadAll(text)).getRows();
  } finally {
    connection.closeSync();
  }
}

/** A part like the generation's: lists, NULLs, strings, ZSTD, row groups of `groupRows`. */
async function writePart(name: string, from: number, rows: number, groupRows = 1_000): Promise<string> {
  const path = join(dir, name);
  await query(
    `COPY (SELECT i AS id, 'r' || i AS label, CASE WHEN i % 3 = 0 THEN NULL ELSE i * 0.5 END AS price, ` +
      `CASE WHEN i % 2 = 0 THEN [{'price': i::DOUBLE, 'size': 1.0}] END AS bids ` +
      `FROM range(${from}, ${from + rows}) t(i)) TO ${sql(path)} ` +
      `(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE ${groupRows})`,
  );
  return path;
}

async function stitchTo(
  paths: readonly string[],
  name: string,
  kv: Record<string, string> = {},
): Promise<string> {
  const parts: StitchPart[] = await Promise.all(paths.map(localPart));
  const plan = planStitch(parts, kv);
  const store = new LocalArtifactStore(dir);
  expect(await store.put(name, stitchBytes(parts, plan))).toBe(plan.bytes);
  return store.pathOf(name);
}

const readRows = async (path: string): Promise<Row[]> =>
  parquetReadObjects({ file: await asyncBufferFromFile(path), compressors });

const digest = (rows: unknown): string =>
  createHash('sha256')
    .update(JSON.stringify(rows, (_, v) => (typeof v === 'bigint' ? v.toString() : v)))
    .digest('hex');

describe('thrift compact footer codec', () => {
  it('re-encodes a DuckDB footer byte for byte', async () => {
    const bytes = new Uint8Array(await readFile(await writePart('codec.parquet', 0, 5_000)));
    const start = footerStart(bytes.subarray(bytes.length - 8), bytes.length);
    const footer = bytes.subarray(start, bytes.length - 8);
    const { struct, length } = readStruct(footer);
    expect(length).toBe(footer.length);
    expect(Buffer.from(writeStruct(struct)).equals(Buffer.from(footer))).toBe(true);
  });

  it('round-trips negative numbers, long lists, doubles, bools and far field ids', () => {
    const struct = {
      fields: [
        { id: 1, type: 5, value: -123_456 },
        { id: 2, type: 6, value: -(2n ** 62n) },
        { id: 3, type: 7, value: -1.5 },
        { id: 4, type: 1, value: true },
        { id: 5, type: 2, value: false },
        { id: 40, type: 9, value: { elemType: 5, items: Array.from({ length: 20 }, (_, i) => i - 10) } },
        { id: 41, type: 11, value: { keyType: 8, valueType: 4, entries: [[new Uint8Array([65]), -3]] } },
      ],
    } as Parameters<typeof writeStruct>[0];
    expect(readStruct(writeStruct(struct)).struct).toEqual(struct);
  });

  it('refuses a truncated footer', () => {
    const bytes = writeStruct({ fields: [{ id: 1, type: 8, value: new Uint8Array(10) }] });
    expect(() => readStruct(bytes.subarray(0, 5))).toThrow(/past end|end of input/);
  });
});

describe('stitch', () => {
  it('reads back as the parts in order, with DuckDB and with hyparquet, ZSTD, one footer', async () => {
    const a = await writePart('a.parquet', 0, 2_500);
    const b = await writePart('b.parquet', 2_500, 700);
    const c = await writePart('c.parquet', 3_200, 1_800);
    const out = await stitchTo([a, b, c], 'abc.parquet', { job_id: 'sim_batch_x', row_count: '5000' });

    const expected = await query(
      `SELECT * FROM read_parquet([${[a, b, c].map(sql).join(', ')}]) ORDER BY id`,
    );
    expect(await query(`SELECT * FROM read_parquet(${sql(out)})`)).toEqual(expected);
    expect(await query(`SELECT DISTINCT compression FROM parquet_metadata(${sql(out)})`)).toEqual([['ZSTD']]);
    // The parts' row groups, all of them, as they were.
    const groups = async (files: string[]) =>
      query(
        `SELECT count(DISTINCT (file_name, row_group_id)) FROM parquet_metadata([${files.map(sql).join(', ')}])`,
      );
    expect(await groups([out])).toEqual(await groups([a, b, c]));

    const rows = await readRows(out);
    expect(rows.map((r) => Number(r.id))).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect(digest(rows)).toBe(
      digest([...(await readRows(a)), ...(await readRows(b)), ...(await readRows(c))]),
    );
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(out));
    expect(meta.num_rows).toBe(5_000n);
    expect(meta.key_value_metadata).toEqual([
      { key: 'job_id', value: 'sim_batch_x' },
      { key: 'row_count', value: '5000' },
    ]);
  });

  it('costs the parts plus one footer: the column chunks are the parts’ bytes', async () => {
    const a = await writePart('x.parquet', 0, 3_000);
    const b = await writePart('y.parquet', 3_000, 3_000);
    const out = await stitchTo([a, b], 'xy.parquet');
    const [pa, pb] = await Promise.all([a, b].map(localPart));
    const bytes = await readFile(out);
    const bodyA = (await readFile(a)).subarray(4, 4 + (pa as StitchPart).bodyLength);
    const bodyB = (await readFile(b)).subarray(4, 4 + (pb as StitchPart).bodyLength);
    expect(bytes.subarray(4, 4 + bodyA.length).equals(bodyA)).toBe(true);
    expect(bytes.subarray(4 + bodyA.length, 4 + bodyA.length + bodyB.length).equals(bodyB)).toBe(true);
  });

  it('refuses parts of different schemas, and no parts at all', async () => {
    const a = await writePart('s1.parquet', 0, 10);
    const other = join(dir, 's2.parquet');
    await query(`COPY (SELECT 1 AS id) TO ${sql(other)} (FORMAT PARQUET, COMPRESSION ZSTD)`);
    const parts = await Promise.all([a, other].map(localPart));
    expect(() => planStitch(parts, {})).toThrow(/another schema/);
    expect(() => planStitch([], {})).toThrow(/no part files/);
  });
});

describe('generated datasets', () => {
  const manifest = (driver: Record<string, unknown>) =>
    normalizeManifest({
      config: { symbol: 'ETH', seed: 11, book_update_interval_ms: 50, book_depth: 3, trade_intensity: 4 },
      duration_seconds: 720,
      driver,
    }).manifest;
  let runs = 0;
  const generate = (driver: Record<string, unknown>, rowsPerPart?: number) =>
    generateDataset({
      manifest: manifest(driver),
      jobId: 'sim_batch_stitch',
      outPath: join(dir, `gen-${runs++}.parquet`),
      tmpDir: join(dir, 'tmp'),
      ...(rowsPerPart ? { rowsPerPart } : {}),
    });

  it('has the same rows for 1, 2 and 4 workers and any window size (DuckDB and hyparquet)', async () => {
    const reference = await generate({ window_seconds: 720 });
    const rows = await readRows(reference.path);
    expect(rows.length).toBe(reference.rowCount);
    const expected = digest(rows);
    const cases = [
      { multiprocess: false, window_seconds: 60 },
      { multiprocess: true, workers: 1, window_seconds: 240 },
      { multiprocess: true, workers: 2, window_seconds: 120 },
      { multiprocess: true, workers: 4, window_seconds: 60 },
    ];
    for (const driver of cases) {
      const result = await generate(driver, 3_000);
      expect(result.rowCount).toBe(reference.rowCount);
      expect(digest(await readRows(result.path))).toBe(expected);
      // Row by row in file order, every column, in DuckDB.
      const numbered = (path: string) =>
        `SELECT row_number() OVER () AS n, * FROM read_parquet(${sql(path)})`;
      const [x, y] = [numbered(result.path), numbered(reference.path)];
      const differing = await query(
        `SELECT count(*) FROM ((${x} EXCEPT ALL ${y}) UNION ALL (${y} EXCEPT ALL ${x}))`,
      );
      expect(differing).toEqual([[0n]]);
    }
  }, 600_000);
});
