/**
 * `mdp generate`: submits an asynchronous generation job, draws its progress (`rows_done /
 * rows_total`), downloads the Parquet with a byte progress bar, verifies `content_length_bytes`
 * and prints the `manifest_hash`.
 */
import { SimulationClient } from '@mdp/client';
import { type Command, integer, required } from '../command.ts';
import { apiKey } from '../config.ts';
import { reportSaved, saveJobArtifact } from '../download.ts';
import { CliError, EXIT, UsageError } from '../exit-codes.ts';
import { bar, formatCount, StatusLine } from '../term.ts';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 };

/** `90`, `90s`, `15m`, `24h`, `7d` → seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m)
    throw new UsageError(`--duration: ${JSON.stringify(text)} is not a duration like 90s, 15m, 24h or 7d`);
  return Number(m[1]) * (UNIT_SECONDS[m[2] || 's'] as number);
}

export const generateCommand: Command = {
  path: ['generate'],
  summary:
    'Generates a synthetic dataset as an asynchronous job: job progress bar, download with a byte progress bar, length verified against content_length_bytes, manifest_hash printed.',
  options: {
    symbol: { type: 'string', value: 'SYMBOL', description: 'symbol to simulate, e.g. BTC (required)' },
    duration: { type: 'string', value: 'DURATION', description: 'model time: 90s, 15m, 24h, 7d (required)' },
    seed: { type: 'string', value: 'N', description: 'PRNG seed (same manifest → same bytes)' },
    out: {
      type: 'string',
      value: 'FILE',
      description: 'where to write the Parquet (default <job_id>.parquet)',
    },
  },
  details: 'Example:\n  mdp generate --symbol BTC --duration 24h --seed 7 --out btc.parquet',
  async run(ctx, values) {
    const symbol = required(values, 'symbol');
    const duration_seconds = parseDuration(required(values, 'duration'));
    const seed = integer(values, 'seed');
    const sim = new SimulationClient({ url: ctx.endpoints.url, key: apiKey(ctx.env) });
    const job = await sim.generate({
      config: { symbol, ...(seed !== undefined ? { seed } : {}) },
      duration_seconds,
    });
    const { err, errColor } = ctx.term;
    if (!ctx.json) err.write(`${errColor.dim(`job ${job.jobId} queued, manifest ${job.manifestHash}`)}\n`);
    const status = new StatusLine(ctx.term);
    let result: Awaited<ReturnType<typeof job.wait>>;
    try {
      result = await job.wait({
        signal: ctx.signal,
        onProgress: (j) => {
          const { rows_done, rows_total } = j.progress;
          status.update(
            bar(
              ctx.term,
              'generating',
              rows_done,
              rows_total,
              `${formatCount(rows_done)} / ${formatCount(rows_total)} rows (${j.status})`,
            ),
          );
        },
      });
    } catch (e) {
      status.done();
      if (ctx.signal.aborted)
        throw new CliError(
          `stopped waiting; job ${job.jobId} goes on: ${job.accepted.status_url}`,
          ctx.stopCode(),
        );
      throw e;
    }
    status.update(bar(ctx.term, 'generating', 1, 1, `${formatCount(result.row_count)} rows`), true);
    status.done();
    const file = (values.out as string | undefined) ?? `${result.job_id}.parquet`;
    const bytes = await saveJobArtifact(ctx, sim, result, file);
    reportSaved(ctx, result, file, bytes, `manifest_hash ${result.manifest_hash}`);
    return EXIT.ok;
  },
};
