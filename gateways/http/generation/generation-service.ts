/**
 * `POST /data/generate` behind the routes and the MCP tool: validate the manifest, record the job
 * (KV `jobs`, state queued), put it on the `JOBS` work queue, and, unless asynchronous, wait for
 * a worker to finish it. The answer is the spec's batch generation response.
 */
import { ZodError } from 'zod';
import { estimateRows } from '../../../consumers/generation/windows.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { JOB_SUBJECT, type JobMessage, type JobRecord, newJobId } from '../../../contracts/jobs.ts';
import { manifestFieldErrors, manifestHash, normalizeManifest } from '../../../contracts/manifest.ts';
import { decode, encode } from '../../../platform/codec.ts';
import type { Bucket } from '../../../platform/kv.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { GenerateResponse, GenerationPort, JobAccepted } from '../ports.ts';

export function completedResponse(job: JobRecord, baseUrl: string): GenerateResponse {
  const a = job.artifact as NonNullable<JobRecord['artifact']>;
  return {
    status: 'completed',
    download_url: `${baseUrl}/artifacts/${a.file}`,
    row_count: a.row_count,
    storage_backend: 'local',
    content_length_bytes: a.content_length_bytes,
    job_id: job.job_id,
    manifest_hash: job.manifest_hash,
  };
}

function parseManifest(body: unknown) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new ApiError('invalid_params', 'the body must be a JSON object', {
      field: 'body',
      reason: 'expected a JSON object',
    });
  }
  try {
    return normalizeManifest(body);
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const issues = manifestFieldErrors(err);
    const first = issues[0] ?? { field: 'body', reason: 'invalid' };
    throw new ApiError('unprocessable', `invalid ${first.field}: ${first.reason}`, { ...first, issues });
  }
}

/**
 * Rows one job may produce (about 6 GB of Parquet): a week of 10 ms books with heavy trading would
 * otherwise ask for ~180M rows. The estimate is the model's own (books + expected trades).
 */
export const MAX_ROWS_PER_JOB = 100_000_000;

function checkBudget(normalized: ReturnType<typeof normalizeManifest>): void {
  const rows = estimateRows(normalized.config, normalized.manifest.duration_seconds * 1_000);
  if (rows > MAX_ROWS_PER_JOB) {
    const reason = `about ${rows.toLocaleString('en-US')} rows; at most ${MAX_ROWS_PER_JOB.toLocaleString('en-US')} per job: shorten duration_seconds, raise book_update_interval_ms or lower trade_intensity`;
    throw new ApiError('unprocessable', `dataset too large: ${reason}`, {
      field: 'duration_seconds',
      reason,
    });
  }
}

export class GenerationService implements GenerationPort {
  constructor(
    private readonly nats: Nats,
    private readonly jobs: Bucket<JobRecord>,
  ) {}

  async generate(
    body: unknown,
    ctx: Parameters<GenerationPort['generate']>[1],
  ): Promise<GenerateResponse | JobAccepted> {
    const normalized = parseManifest(body);
    checkBudget(normalized);
    const hash = manifestHash(normalized);
    const jobId = newJobId();
    const now = Date.now();
    const { manifest } = normalized;
    const record: JobRecord = {
      job_id: jobId,
      account_id: ctx.principal?.accountId ?? null,
      status: 'queued',
      manifest_hash: hash,
      duration_seconds: manifest.duration_seconds,
      symbol: manifest.config.symbol,
      created_at: now,
      started_at: null,
      finished_at: null,
      attempts: 0,
      progress: { rows_done: 0, rows_total: 0 },
      artifact: null,
      error: null,
    };
    await this.jobs.put(jobId, record);
    const msg: JobMessage = {
      job_id: jobId,
      account_id: record.account_id,
      manifest,
      manifest_hash: hash,
      requested_at: now,
    };
    await this.nats.js.publish(JOB_SUBJECT, encode(msg), { msgID: jobId });
    if (ctx.async)
      return {
        status: 'queued',
        job_id: jobId,
        status_url: `${ctx.baseUrl}/data/jobs/${jobId}`,
        manifest_hash: hash,
      };
    const done = await this.finished(jobId);
    if (done.status === 'failed') throw new ApiError('generation_failed', done.error?.message);
    return completedResponse(done, ctx.baseUrl);
  }

  /** Resolves with the job's record once it is completed or failed (watches its KV key). */
  async finished(jobId: string): Promise<JobRecord> {
    const watch = await this.jobs.raw.watch({ key: jobId });
    try {
      for await (const e of watch) {
        if (e.operation !== 'PUT' || e.value.length === 0) continue;
        const r = decode<JobRecord>(e.value);
        if (r.status === 'completed' || r.status === 'failed') return r;
      }
    } finally {
      watch.stop();
    }
    throw new ApiError('internal');
  }
}
