/**
 * `POST /data/generate` behind the routes and the MCP tool: validate the manifest, check the
 * artifacts disk and the account's quotas, record the job (KV `jobs`, state queued), put it on the
 * `JOBS` work queue, and, unless asynchronous, wait for a worker to finish it. The answer is the
 * spec's batch generation response. A synchronous wait is bounded three ways: a deadline (then
 * 504 `generation_timeout` naming the job to poll), the caller's signal (its client left), and a
 * cap on waits per process (503 beyond); in every case the job itself goes on. A retry of a
 * request (same account and manifest, or same `Idempotency-Key`) attaches to the job its first
 * attempt queued while that job lives (job-retries.ts): it neither queues another nor spends quota.
 */
import { ZodError } from 'zod';
import { estimateRows } from '../../../consumers/generation/windows.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { JOB_SUBJECT, type JobRecord, newJobId, queuedJob } from '../../../contracts/jobs.ts';
import { manifestHash, normalizeManifest } from '../../../contracts/manifest.ts';
import type { Config } from '../../../platform/config.ts';
import { DISK_RETRY_AFTER_S, ensureFreeDisk } from '../../../platform/disk-space.ts';
import type { Bucket } from '../../../platform/kv.ts';
import { encode } from '../../../platform/msgpack.ts';
import type { Nats } from '../../../platform/nats.ts';
import { invalidInput } from '../../core/validate.ts';
import type { GenerateResponse, GenerationPort, JobAccepted } from '../ports.ts';
import { JobQuota } from './job-quota.ts';
import { JobRetries, type RetryIdentity } from './job-retries.ts';
import { JobWaiters } from './job-waiters.ts';
import type { QuotaLimits } from './quota-ledger.ts';

export function completedResponse(job: JobRecord, baseUrl: string): GenerateResponse {
  const a = job.artifact as NonNullable<JobRecord['artifact']>;
  return {
    status: 'completed',
    download_url: `${baseUrl}/artifacts/${a.file}`,
    row_count: a.row_count,
    storage_backend: a.storage_backend ?? 'local',
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
    throw invalidInput(err, body); // 400 for a missing field or wrong type, else 422 (core/validate.ts)
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

export type GenerationOptions = {
  /** Where workers write artifacts: its disk must keep `minFreeDiskBytes` free. */
  artifactsDir: string;
  minFreeDiskBytes: number;
  /** Longest a synchronous request waits for its job, ms. */
  syncDeadlineMs: number;
  /** Synchronous requests this process waits on at once. */
  maxSyncWaiters: number;
  quota: QuotaLimits;
};

/** The generation request context, plus the signal of the client's connection. */
export type GenerationContext = Parameters<GenerationPort['generate']>[1] & {
  signal?: AbortSignal;
  /** The request's `Idempotency-Key` (checked: job-retries.ts), if it sent one. */
  idempotencyKey?: string | null;
};

/** 504: the job did not finish in time; it goes on, at `statusUrl`. */
export class GenerationTimeoutError extends ApiError {
  constructor(
    readonly jobId: string,
    readonly statusUrl: string,
    deadlineMs: number,
  ) {
    super(
      'generation_timeout',
      `job ${jobId} still running after ${deadlineMs} ms; poll ${statusUrl}, or send the same request again: it attaches to this job`,
    );
  }
}

/** Retry-After of a refusal because this process already waits on its maximum of jobs, seconds. */
const WAITERS_RETRY_AFTER_S = 5;

export class GenerationService implements GenerationPort {
  private readonly quota: JobQuota;
  private readonly waiters: JobWaiters;
  private readonly retries: JobRetries;
  private syncInFlight = 0;

  constructor(
    private readonly nats: Nats,
    private readonly jobs: Bucket<JobRecord>,
    private readonly opts: GenerationOptions,
  ) {
    this.quota = new JobQuota(jobs, opts.quota);
    this.waiters = new JobWaiters(jobs);
    this.retries = new JobRetries(nats, jobs);
  }

  /** Synchronous requests waiting on their job in this process. */
  get waiting(): number {
    return this.waiters.size;
  }

  async generate(body: unknown, ctx: GenerationContext): Promise<GenerateResponse | JobAccepted> {
    const normalized = parseManifest(body);
    checkBudget(normalized);
    await ensureFreeDisk(this.opts.artifactsDir, this.opts.minFreeDiskBytes);
    if (ctx.async) return this.enqueue(normalized, ctx);
    if (this.syncInFlight >= this.opts.maxSyncWaiters) {
      const err = new ApiError('overload', `${this.syncInFlight} synchronous generations already waiting`);
      err.retryAfterSeconds = WAITERS_RETRY_AFTER_S;
      throw err;
    }
    this.syncInFlight++;
    try {
      const queued = await this.enqueue(normalized, ctx);
      const done = await this.waiters.wait(queued.job_id, this.opts.syncDeadlineMs, ctx.signal);
      if (done === 'deadline')
        throw new GenerationTimeoutError(queued.job_id, queued.status_url, this.opts.syncDeadlineMs);
      if (done === 'aborted') throw new ApiError('cancelled', 'the client closed the connection');
      if (done.status === 'failed') throw failure(done);
      return completedResponse(done, ctx.baseUrl);
    } finally {
      this.syncInFlight--;
    }
  }

  private async enqueue(
    normalized: ReturnType<typeof normalizeManifest>,
    ctx: GenerationContext,
  ): Promise<JobAccepted> {
    const hash = manifestHash(normalized);
    const accepted = (jobId: string): JobAccepted => ({
      status: 'queued',
      job_id: jobId,
      status_url: `${ctx.baseUrl}/data/jobs/${jobId}`,
      manifest_hash: hash,
    });
    const accountId = ctx.principal?.accountId ?? null;
    const retry: RetryIdentity | null = accountId
      ? { accountId, manifestHash: hash, idempotencyKey: ctx.idempotencyKey ?? null }
      : null;
    if (!retry) return this.queue(normalized, ctx, null, accepted);
    return this.retries.serialized(retry, async () => {
      const earlier = await this.retries.find(retry);
      return earlier ? accepted(earlier.job_id) : this.queue(normalized, ctx, retry, accepted);
    });
  }

  private async queue(
    normalized: ReturnType<typeof normalizeManifest>,
    ctx: GenerationContext,
    retry: RetryIdentity | null,
    accepted: (jobId: string) => JobAccepted,
  ): Promise<JobAccepted> {
    const accountId = ctx.principal?.accountId ?? null;
    const jobId = newJobId();
    const now = Date.now();
    const { manifest } = normalized;
    if (accountId) await this.quota.admit(accountId, jobId);
    const { record, message: msg } = queuedJob(jobId, accountId, manifest, now);
    try {
      await this.jobs.put(jobId, record);
      const owner = retry ? await this.retries.claim(retry, jobId) : jobId;
      if (owner !== jobId) {
        // Another attempt of this request queued its job first: drop ours, answer with theirs.
        await this.jobs.delete(jobId).catch(() => {});
        if (accountId) await this.quota.release(accountId, jobId).catch(() => {});
        return accepted(owner);
      }
      await this.nats.js.publish(JOB_SUBJECT, encode(msg), { msgID: jobId });
    } catch (err) {
      // Never queued: no record left for a retry to attach to, no slot held.
      await this.jobs.delete(jobId).catch(() => {});
      if (accountId) await this.quota.release(accountId, jobId).catch(() => {});
      throw err;
    }
    return accepted(jobId);
  }

  /** Stops waiting on jobs (process shutdown): waiters still there end at their deadline. */
  close(): Promise<void> {
    return this.waiters.close();
  }
}

/** The error a failed job answers with: 503 when it failed for lack of disk, else 500. */
function failure(job: JobRecord): ApiError {
  if (job.error?.code === 'storage_full') {
    const err = new ApiError('storage_full', job.error.message);
    err.retryAfterSeconds = DISK_RETRY_AFTER_S;
    return err;
  }
  return new ApiError('generation_failed', job.error?.message);
}

/** The service's options from the configuration. */
export function generationOptions(config: Config, artifactsDir: string): GenerationOptions {
  return {
    artifactsDir,
    minFreeDiskBytes: config.MIN_FREE_DISK_BYTES,
    syncDeadlineMs: config.GENERATE_SYNC_DEADLINE_MS,
    maxSyncWaiters: config.GENERATE_SYNC_MAX_WAITERS,
    quota: {
      maxActiveJobs: config.JOB_QUOTA_ACTIVE,
      maxStoredBytes: config.ARTIFACT_QUOTA_BYTES,
      retentionMs: config.ARTIFACT_RETENTION_S * 1_000,
    },
  };
}
