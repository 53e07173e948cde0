import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import type { BookSnapshot } from '../../contracts/events.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { BLOCK_MS, parseGenerationModelConfig } from '../../producers/simulator/config.ts';
import { boundaryLogPrices, simulateBlock } from '../../producers/simulator/market.ts';
import { MS_PER_YEAR } from '../../producers/simulator/params.ts';

// κ = 3650 per year: a deviation decays by e in a tenth of a day, so weeks of boundaries hold
// hundreds of independent excursions.
const KAPPA = 3650;
const SIGMA = 0.6;
const ou = parseGenerationModelConfig({
  symbol: 'BTC',
  seed: 4,
  price_process: 'ou',
  ou_mean_reversion: KAPPA,
  ou_long_run_price: 60_000,
  volatility_annual: SIGMA,
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'generation-ou-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('ou price process: block independence', () => {
  it('computes block k alone exactly as after the blocks before it, on the boundary path', () => {
    const bounds = boundaryLogPrices(ou, 6);
    const inOrder = [0, 1, 2, 3, 4, 5].map((k) => simulateBlock(ou, k, bounds));
    expect(simulateBlock(ou, 5)).toEqual(inOrder[5]);
    expect(simulateBlock(ou, 2)).toEqual(inOrder[2]);
    const first = inOrder[3]?.[0] as BookSnapshot;
    expect(Math.abs(Math.log(first.mid_price) - (bounds[3] as number))).toBeLessThan(1e-5);
  });
});

describe('ou price process: statistics', () => {
  it('reverts to the long-run level at the configured speed, with the stationary spread σ/√(2κ)', () => {
    const days = 60;
    const n = (days * 86_400_000) / BLOCK_MS;
    const x = boundaryLogPrices(ou, n);
    const theta = Math.log(60_000);
    const burnIn = 1440; // one day: e^(−10) of the initial gap remains
    let sxy = 0;
    let sxx = 0;
    let sum = 0;
    let sumSquares = 0;
    for (let k = burnIn; k < n; k++) {
      const y0 = (x[k] as number) - theta;
      const y1 = (x[k + 1] as number) - theta;
      sxy += y0 * y1;
      sxx += y0 * y0;
      sum += y1;
      sumSquares += y1 * y1;
    }
    const count = n - burnIn;
    // AR(1) coefficient of the block boundaries: e^(−κT) exactly for OU sampled every T.
    const phi = Math.exp(-(KAPPA * BLOCK_MS) / MS_PER_YEAR);
    // Its least-squares estimate has standard error √((1 − φ²)/n) ≈ 4e-4: ±0.002 is 5 of them.
    expect(Math.abs(sxy / sxx - phi)).toBeLessThan(0.002);
    // About days·κ/365 ≈ 600 independent excursions: the sd's relative error is a few percent.
    const sd = Math.sqrt(sumSquares / count - (sum / count) ** 2);
    expect(Math.abs(sd / (SIGMA / Math.sqrt(2 * KAPPA)) - 1)).toBeLessThan(0.15);
    // The mean's standard error is sd·√((1 + φ)/((1 − φ)·n)) ≈ 0.06·sd: ±0.25·sd is 4 of them.
    expect(Math.abs(sum / count)).toBeLessThan(0.25 * (SIGMA / Math.sqrt(2 * KAPPA)));
  });

  it('generates a dataset whose short-horizon volatility is volatility_annual, identical across windows', async () => {
    // Two hours of one-second books: n = 7,199 returns, relative standard error 1/√(2n) ≈ 0.83 %,
    // so ±4 % is about 5 of them; mean reversion shrinks one-second variance by only κh ≈ 1e-4.
    const input = (window: number) => ({
      config: { ...ou, book_update_interval_ms: 1000, book_depth: 1, trade_intensity: 0.2 },
      duration_seconds: 7200,
      driver: { window_seconds: window },
    });
    const paths = [join(dir, 'w600.parquet'), join(dir, 'w1800.parquet')];
    for (const [i, window] of [600, 1800].entries()) {
      const { manifest } = normalizeManifest(input(window));
      await generateDataset({ manifest, jobId: 'sim_batch_ou', outPath: paths[i] as string });
    }
    // The stitch keeps each window's row groups, so across window sizes the rows are identical,
    // not the bytes (consumers/generation/LAYOUT.md, Determinism).
    const [rows, other] = await Promise.all(
      paths.map(async (p) => parquetReadObjects({ file: await asyncBufferFromFile(p), compressors })),
    );
    expect(other).toEqual(rows);
    const mids = (rows ?? []).filter((r) => r.event_type === 'book').map((r) => r.mid_price as number);
    let sumSquares = 0;
    for (let i = 1; i < mids.length; i++)
      sumSquares += Math.log((mids[i] as number) / (mids[i - 1] as number)) ** 2;
    const realized = Math.sqrt((sumSquares / (mids.length - 1)) * (MS_PER_YEAR / 1000));
    expect(mids.length).toBe(7200);
    expect(Math.abs(realized / SIGMA - 1)).toBeLessThan(0.04);
  });
});
