import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type GenerateDatasetOptions,
  GenerationError,
  generateDataset,
} from '../../consumers/generation/generate.ts';
import { OUTPUT_COLUMNS } from '../../consumers/generation/layout.ts';
import { backoffMs } from '../../consumers/generation/retry.ts';
import { planWindows } from '../../consumers/generation/windows.ts';
import { normalizeManifest, type SimulationManifestInput } from '../../contracts/manifest.ts';
import { MS_PER_YEAR } from '../../producers/simulator/params.ts';

type Row = Record<string, unknown>;
type Level = { price: number; size: number };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'generation-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let runs = 0;
async function generate(input: SimulationManifestInput, extra: Partial<GenerateDatasetOptions> = {}) {
  const { manifest } = normalizeManifest(input);
  const outPath = join(dir, `run-${runs++}.parquet`);
  return generateDataset({ manifest, jobId: 'sim_batch_test', outPath, tmpDir: join(dir, 'tmp'), ...extra });
}

async function readRows(path: string): Promise<Row[]> {
  return parquetReadObjects({ file: await asyncBufferFromFile(path), compressors });
}

async function kvMetadata(path: string): Promise<Record<string, string | undefined>> {
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path));
  return Object.fromEntries((metadata.key_value_metadata ?? []).map(({ key, value }) => [key, value]));
}

async function rowGroupSizes(path: string): Promise<number[]> {
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(path));
  return metadata.row_groups.map((group) => Number(group.num_rows));
}

const sha256 = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

/** A digest of decoded rows (int64 columns decode as bigint). */
const rowsDigest = (rows: Row[]): string =>
  createHash('sha256')
    .update(JSON.stringify(rows, (_, v) => (typeof v === 'bigint' ? v.toString() : v)))
    .digest('hex');

/** Rows that differ at the same position in two files, every column compared (+1 if counts differ). */
async function differingRows(a: string, b: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(
      `SELECT (SELECT count(*) FROM read_parquet('${a}')) <> (SELECT count(*) FROM read_parquet('${b}')),
              count(*) FILTER (WHERE x IS DISTINCT FROM y)
       FROM read_parquet('${a}') x POSITIONAL JOIN read_parquet('${b}') y`,
    );
    const [countsDiffer, differing] = reader.getRows()[0] as [boolean, bigint];
    return Number(differing) + (countsDiffer ? 1 : 0);
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('generation: planning', () => {
  it('cuts [0, duration) into windows, the last one shorter', () => {
    expect(planWindows(150, 60)).toEqual([
      { index: 0, fromMs: 0, toMs: 60_000 },
      { index: 1, fromMs: 60_000, toMs: 120_000 },
      { index: 2, fromMs: 120_000, toMs: 150_000 },
    ]);
    expect(planWindows(604_800, 86_400)).toHaveLength(7);
  });

  it('backs off exponentially from backoff_seconds, capped at 60 s', () => {
    const policy = { maxRetries: 10, backoffSeconds: 0.5 };
    expect([1, 2, 3, 4].map((n) => backoffMs(policy, n))).toEqual([500, 1000, 2000, 4000]);
    expect(backoffMs({ maxRetries: 10, backoffSeconds: 60 }, 3)).toBe(60_000);
    expect(backoffMs({ maxRetries: 1, backoffSeconds: 0 }, 1)).toBe(0);
  });
});

describe('generation: determinism across drivers', () => {
  it('gives the same rows and hash in-process and over workers (2; 1 and 4 in the full run) at three window sizes, the same bytes per window size', async () => {
    // Five minutes of BTC with the default model: about 4,800 rows, one Parquet row group.
    const small: SimulationManifestInput = { config: { symbol: 'BTC', seed: 11 }, duration_seconds: 300 };
    // `npm test` runs in-process, 2 workers and another window size; GENERATION_DRIVERS=all (as
    // `npm run test:full` sets) adds 1 and 4 workers.
    const all = process.env.GENERATION_DRIVERS === 'all';
    const drivers = [
      { multiprocess: false, window_seconds: 60 },
      ...(all ? [{ multiprocess: true, workers: 1, window_seconds: 60 }] : []),
      { multiprocess: true, workers: 2, window_seconds: 60 },
      ...(all ? [{ multiprocess: true, workers: 4, window_seconds: 60 }] : []),
      { multiprocess: true, workers: 2, window_seconds: 120 },
    ];
    const results = [];
    for (const driver of drivers) results.push(await generate({ ...small, driver }));
    // Windows cut into parts of one 2,048-row batch each: the stitch sees many more files.
    results.push(await generate({ ...small, driver: { window_seconds: 300 } }, { rowsPerPart: 2048 }));
    const reference = results[0] as (typeof results)[number];
    const rows = await readRows(reference.path);
    expect(rows.length).toBe(reference.rowCount);
    expect(rows.length).toBeGreaterThan(3000);
    const digest = rowsDigest(rows);
    for (const result of results) {
      expect(result.manifestHash).toBe(reference.manifestHash);
      expect(result.rowCount).toBe(reference.rowCount);
      expect(rowsDigest(await readRows(result.path))).toBe(digest);
    }
    // The stitch copies each window's parts: at the same window size the files are byte-identical
    // whatever the workers; other window sizes give other row groups (LAYOUT.md).
    const sameWindows = results.filter((_, i) => drivers[i]?.window_seconds === 60);
    for (const result of sameWindows) expect(await sha256(result.path)).toBe(await sha256(reference.path));
  }, 300_000);

  it('keeps the bytes across worker counts, and across window sizes the rows only (several row groups)', async () => {
    // 126,000 books + about 2,500 trades: more than one 122,880-row group.
    const large: SimulationManifestInput = {
      config: { symbol: 'ETH', seed: 5, book_update_interval_ms: 10, book_depth: 1, trade_intensity: 2 },
      duration_seconds: 1260,
    };
    const inProcess = await generate({ ...large, driver: { window_seconds: 60 } });
    const twoWorkers = await generate({
      ...large,
      driver: { multiprocess: true, workers: 2, window_seconds: 60 },
    });
    const oneWindow = await generate({ ...large, driver: { window_seconds: 1260 } });
    // Row by row, in order, every column (in DuckDB: decoding 128k rows twice in JS is slow; the
    // hyparquet read-back is the previous test's).
    expect(await differingRows(oneWindow.path, inProcess.path)).toBe(0);
    // Same windows → same part files → same stitch: byte-identical whatever the workers.
    expect(await sha256(twoWorkers.path)).toBe(await sha256(inProcess.path));
    // Row groups are the parts' row groups, and a part never spans two windows. One window gives
    // groups of exactly 122,880 rows; 60 s windows give one group per window. Same rows, same
    // order, other row-group boundaries: the bytes differ.
    expect((await rowGroupSizes(oneWindow.path))[0]).toBe(122_880);
    expect((await rowGroupSizes(inProcess.path))[0]).not.toBe(122_880);
    expect(await sha256(oneWindow.path)).not.toBe(await sha256(inProcess.path));
  }, 300_000);
});

describe('generation: the artifact', () => {
  it('carries job_id, manifest_hash and row_count in its key-value metadata, and the documented columns', async () => {
    const result = await generate(
      { config: { symbol: 'SOL' }, duration_seconds: 120 },
      { jobId: 'sim_batch_kv' },
    );
    expect(await kvMetadata(result.path)).toMatchObject({
      job_id: 'sim_batch_kv',
      manifest_hash: result.manifestHash,
      row_count: String(result.rowCount),
    });
    expect(result.manifestHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(result.bytes).toBe((await stat(result.path)).size);
    const rows = await readRows(result.path);
    expect(Object.keys(rows[0] as Row)).toEqual([...OUTPUT_COLUMNS]);
    const trade = rows.find((r) => r.event_type === 'trade') as Row;
    const book = rows.find((r) => r.event_type === 'book') as Row;
    expect(trade).toMatchObject({ symbol: 'SOL', source: 'synthetic', best_bid: null, spread_bps: null });
    expect(trade.trade_id).toMatch(/^trd_SOL_\d+_\d+$/);
    // hyparquet decodes a NULL list as undefined (an empty list would be []).
    expect([trade.bids, trade.asks]).toEqual([undefined, undefined]);
    expect(book).toMatchObject({ symbol: 'SOL', side: null, price: null, size: null, trade_id: null });
    expect(typeof book.timestamp_ms).toBe('bigint');
  });

  it('realizes the configured volatility and keeps every book and trade well formed', async () => {
    // Six hours, one book a second: n = 21,599 one-second mid returns. The realized-volatility
    // estimator's relative standard error is 1/√(2n) ≈ 0.48 %, so ±3 % is over 6 standard errors;
    // the half-tick rounding of the mid adds a relative variance below 1e-4.
    const volatility = 0.8;
    const result = await generate({
      config: {
        symbol: 'BTC',
        seed: 21,
        volatility_annual: volatility,
        book_update_interval_ms: 1000,
        book_depth: 3,
        trade_intensity: 0.5,
      },
      duration_seconds: 6 * 3600,
    });
    const rows = await readRows(result.path);
    // Plain counters and one assertion: an expect() per row would dominate the test's time.
    const broken = { order: 0, capture: 0, trade: 0, spread: 0, touch: 0, ladder: 0, size: 0 };
    let previousTs = -1n;
    let previousMid = Number.NaN;
    let sumSquares = 0;
    let returns = 0;
    for (const row of rows) {
      const ts = row.timestamp_ms as bigint;
      if (ts < previousTs) broken.order++;
      if ((row.capture_time_ms as bigint) < ts) broken.capture++;
      previousTs = ts;
      if (row.event_type === 'trade') {
        if (!((row.size as number) > 0 && (row.price as number) > 0)) broken.trade++;
        continue;
      }
      const bids = row.bids as Level[];
      const asks = row.asks as Level[];
      const bestBid = row.best_bid as number;
      const bestAsk = row.best_ask as number;
      if (!((row.spread_bps as number) > 0 && bestAsk > bestBid)) broken.spread++;
      if (bids[0]?.price !== bestBid || asks[0]?.price !== bestAsk) broken.touch++;
      for (let i = 1; i < bids.length; i++) {
        if (!((bids[i] as Level).price < (bids[i - 1] as Level).price)) broken.ladder++;
      }
      for (let i = 1; i < asks.length; i++) {
        if (!((asks[i] as Level).price > (asks[i - 1] as Level).price)) broken.ladder++;
      }
      for (const level of [...bids, ...asks]) if (!(level.size > 0)) broken.size++;
      const mid = row.mid_price as number;
      if (!Number.isNaN(previousMid)) {
        sumSquares += Math.log(mid / previousMid) ** 2;
        returns++;
      }
      previousMid = mid;
    }
    expect(broken).toEqual({ order: 0, capture: 0, trade: 0, spread: 0, touch: 0, ladder: 0, size: 0 });
    expect(rows.length - returns - 1).toBeGreaterThan(5000); // trades
    expect(returns).toBe(6 * 3600 - 1);
    const realized = Math.sqrt((sumSquares / returns) * (MS_PER_YEAR / 1000));
    expect(Math.abs(realized / volatility - 1)).toBeLessThan(0.03);
  });
});

describe('generation: retries and failure', () => {
  const manifest = (driver: object): SimulationManifestInput => ({
    config: { symbol: 'ETH', seed: 3 },
    duration_seconds: 180,
    driver: { window_seconds: 60, backoff_seconds: 0, ...driver },
  });

  it('retries a window that fails once and produces the same rows', async () => {
    const reference = await generate(manifest({ max_retries: 0 }));
    const attempts: string[] = [];
    const progress: number[] = [];
    const retried = await generate(manifest({ max_retries: 1, multiprocess: true, workers: 2 }), {
      failWindows: (index, attempt) => {
        attempts.push(`${index}:${attempt}`);
        return index === 1 && attempt === 0;
      },
      onProgress: (done) => progress.push(done),
    });
    expect(attempts.sort()).toEqual(['0:0', '1:0', '1:1', '2:0']);
    expect(retried.rowCount).toBe(reference.rowCount);
    expect(await sha256(retried.path)).toBe(await sha256(reference.path));
    // One call per window, then the final count.
    expect(progress).toHaveLength(4);
    expect(progress.at(-1)).toBe(retried.rowCount);
  });

  it.each([false, true])(
    'fails the job after max_retries with a clear error and no output (multiprocess %s)',
    async (multiprocess) => {
      const name = `failed-${multiprocess}.parquet`;
      const tmpDir = join(dir, `tmp-failed-${multiprocess}`);
      const { manifest: normalized } = normalizeManifest(
        manifest({ max_retries: 2, multiprocess, workers: 2 }),
      );
      const job = generateDataset({
        manifest: normalized,
        jobId: 'sim_batch_fail',
        outPath: join(dir, name),
        tmpDir,
        failWindows: (index) => index === 2,
      });
      await expect(job).rejects.toThrow(GenerationError);
      await expect(job).rejects.toThrow(
        /window 2 \[120 s, 180 s\) failed after 3 attempt\(s\): .*injected failure/,
      );
      const left = await readdir(dir);
      expect(left).not.toContain(name);
      expect(left.filter((file) => file.endsWith('.tmp'))).toEqual([]);
      expect(await readdir(tmpDir)).toEqual([]);
    },
  );

  it('stops on abort and leaves no output', async () => {
    const controller = new AbortController();
    const { manifest: normalized } = normalizeManifest(manifest({}));
    const job = generateDataset({
      manifest: normalized,
      jobId: 'sim_batch_abort',
      outPath: join(dir, 'aborted.parquet'),
      signal: controller.signal,
      onProgress: () => controller.abort(new Error('cancelled by test')),
    });
    await expect(job).rejects.toThrow('cancelled by test');
    expect(await readdir(dir)).not.toContain('aborted.parquet');
  });
});
