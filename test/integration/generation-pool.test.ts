/**
 * The process's warm worker pool (consumers/generation/worker-pool.ts) as jobs see it: jobs in a
 * row borrow the same threads (none started per job), an aborted job stops only its own windows
 * while a concurrent job on the same threads completes, byte-identical to the same job alone.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { createWorkerPool, type WorkerPool } from '../../consumers/generation/worker-pool.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';

let dir: string;
let pool: WorkerPool;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'generation-pool-test-'));
  pool = createWorkerPool(2);
  await pool.warm();
});
afterAll(async () => {
  await pool?.close();
  await rm(dir, { recursive: true, force: true });
});

/** 10 windows of 60 s on 2 workers. */
const manifestOf = (symbol: string) =>
  normalizeManifest({
    config: { symbol },
    duration_seconds: 600,
    driver: { multiprocess: true, workers: 2, window_seconds: 60 },
  }).manifest;

const sha256 = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

describe('generation on a shared worker pool', () => {
  it('runs jobs in a row on the same warm threads, with the bytes of a job on threads of its own', async () => {
    const warm = pool.threads();
    expect(warm.ids).toHaveLength(2);
    expect(warm.started).toBe(2);
    const paths = [join(dir, 'first.parquet'), join(dir, 'second.parquet'), join(dir, 'own.parquet')];
    const job = (outPath: string, shared: boolean) =>
      generateDataset({
        manifest: manifestOf('BTC'),
        jobId: 'sim_batch_pool',
        outPath,
        tmpDir: join(dir, 'tmp'),
        ...(shared ? { pool } : {}),
      });
    await job(paths[0] as string, true);
    expect(pool.threads()).toEqual(warm);
    await job(paths[1] as string, true);
    expect(pool.threads()).toEqual(warm);
    await job(paths[2] as string, false);
    const [first, second, own] = await Promise.all(paths.map(sha256));
    expect(second).toBe(first);
    expect(own).toBe(first);
  });

  it('aborts one job without touching a concurrent one or the threads', async () => {
    const before = pool.threads();
    const controller = new AbortController();
    const tmpAborted = join(dir, 'tmp-aborted');
    let windowsDone = 0;
    const aborted = generateDataset({
      manifest: manifestOf('ETH'),
      jobId: 'sim_batch_aborted',
      outPath: join(dir, 'aborted.parquet'),
      tmpDir: tmpAborted,
      pool,
      signal: controller.signal,
      // After its second window, while the other job's windows run beside its own.
      onProgress: () => {
        if (++windowsDone === 2) controller.abort(new Error('cancelled by test'));
      },
    });
    const survivor = generateDataset({
      manifest: manifestOf('BTC'),
      jobId: 'sim_batch_pool',
      outPath: join(dir, 'survivor.parquet'),
      tmpDir: join(dir, 'tmp'),
      pool,
    });
    await expect(aborted).rejects.toThrow('cancelled by test');
    const result = await survivor;
    expect(result.rowCount).toBeGreaterThan(0);
    expect(await sha256(join(dir, 'survivor.parquet'))).toBe(await sha256(join(dir, 'first.parquet')));
    expect(await readdir(dir)).not.toContain('aborted.parquet');
    expect(await readdir(tmpAborted)).toEqual([]);
    expect(pool.threads()).toEqual(before);
  });
});
