/**
 * `mdp export`: exports stored events of a time range (POST /data/export) as Parquet or CSV: job
 * progress bar (`rows_done / rows_total`), download with a byte progress bar, length checked
 * against `content_length_bytes` and the file's SHA-256 against the job's.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { SimulationClient } from '@mdp/client';
import { type Command, required } from '../command.ts';
import { apiKey } from '../config.ts';
import { reportSaved, saveJobArtifact } from '../download.ts';
import { CliError, EXIT, UsageError } from '../exit-codes.ts';
import { bar, formatCount, StatusLine } from '../term.ts';

type ExportJob = { job_id: string; status_url: string; first_seq: number; last_seq: number };
type ExportResult = {
  job_id: string;
  format: string;
  download_url: string;
  row_count: number;
  content_length_bytes: number;
  sha256: string;
};
type ExportView = {
  status: 'queued' | 'running' | 'completed' | 'failed';
  progress: { rows_done: number; rows_total: number };
  result: ExportResult | null;
  error: { code: string; message: string } | null;
};

const POLL_MS = 250;

/** `--coin BTC --coin ETH` or `--coin BTC,ETH`. */
const listOf = (v: string | boolean | string[] | undefined): string[] | undefined => {
  if (v === undefined || typeof v === 'boolean') return undefined;
  const items = (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(',')).map((s) => s.trim());
  return items.filter(Boolean);
};

/** An instant as the API takes it: Unix ms as a number, ISO 8601 as given. */
const instant = (text: string): number | string => (/^\d+$/.test(text.trim()) ? Number(text) : text);

const sha256Of = async (file: string): Promise<string> => {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
};

export const exportCommand: Command = {
  path: ['export'],
  summary:
    'Exports stored events of a time range as Parquet or CSV: job progress bar, download with a byte progress bar, length and SHA-256 verified.',
  options: {
    coin: {
      type: 'string',
      value: 'COIN',
      multiple: true,
      description: 'coin, repeatable or A,B (required)',
    },
    source: { type: 'string', value: 'SOURCE', multiple: true, description: 'only these sources' },
    'event-type': { type: 'string', value: 'TYPE', multiple: true, description: 'trade and/or book' },
    from: { type: 'string', value: 'TIME', description: 'start, included: ISO 8601 or Unix ms (required)' },
    to: { type: 'string', value: 'TIME', description: 'end, included: ISO 8601 or Unix ms (required)' },
    format: { type: 'string', value: 'FORMAT', description: 'parquet (default) or csv' },
    out: { type: 'string', value: 'FILE', description: 'where to write (default <job_id>.<format>)' },
  },
  details:
    'Example:\n  mdp export --coin BTC --from 2026-01-01T09:00:00Z --to 2026-01-01T11:00:00Z --format parquet --out btc.parquet',
  async run(ctx, values) {
    const coins = listOf(values.coin);
    if (!coins?.length) throw new UsageError('--coin is required');
    const format = (values.format as string | undefined) ?? 'parquet';
    if (format !== 'parquet' && format !== 'csv') throw new UsageError('--format: parquet or csv');
    const sources = listOf(values.source);
    const eventTypes = listOf(values['event-type']);
    const body = {
      coins,
      from: instant(required(values, 'from')),
      to: instant(required(values, 'to')),
      format,
      ...(sources ? { sources } : {}),
      ...(eventTypes ? { event_types: eventTypes } : {}),
    };
    const sim = new SimulationClient({ url: ctx.endpoints.url, key: apiKey(ctx.env) });
    const job = await sim.http.json<ExportJob>('POST', '/data/export', { body, signal: ctx.signal });
    const { err, errColor } = ctx.term;
    if (!ctx.json)
      err.write(`${errColor.dim(`job ${job.job_id} queued, sequences ${job.first_seq}…${job.last_seq}`)}\n`);
    const status = new StatusLine(ctx.term);
    let view: ExportView;
    try {
      for (;;) {
        view = await sim.http.json<ExportView>('GET', job.status_url, { signal: ctx.signal });
        const { rows_done, rows_total } = view.progress;
        if (view.status === 'completed' || view.status === 'failed') break;
        status.update(
          bar(
            ctx.term,
            'exporting',
            rows_done,
            rows_total,
            `${formatCount(rows_done)} / ${formatCount(rows_total)} rows (${view.status})`,
          ),
        );
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    } catch (e) {
      status.done();
      if (ctx.signal.aborted)
        throw new CliError(`stopped waiting; job ${job.job_id} goes on: ${job.status_url}`, ctx.stopCode());
      throw e;
    }
    if (view.status === 'failed' || !view.result) {
      status.done();
      throw new CliError(`export failed: ${view.error?.message ?? 'unknown error'}`, EXIT.failure);
    }
    const result = view.result;
    status.update(bar(ctx.term, 'exporting', 1, 1, `${formatCount(result.row_count)} rows`), true);
    status.done();
    const file = (values.out as string | undefined) ?? `${result.job_id}.${result.format}`;
    const bytes = await saveJobArtifact(ctx, sim, result, file);
    const digest = await sha256Of(file);
    if (digest !== result.sha256) {
      await rm(file, { force: true });
      throw new CliError(
        `download corrupt: sha256 ${digest}, the job says ${result.sha256}`,
        EXIT.verification,
      );
    }
    reportSaved(ctx, result, file, bytes, `sha256 ${result.sha256}`);
    return EXIT.ok;
  },
};
