/**
 * `POST /data/export` and `export_range` behind the route and the tool: validate the request,
 * resolve `from`/`to` to stream positions once (gateways/core/time-position.ts: the stream's own
 * stored times, as a replay by time), check the bounds, the artifacts disk and the account's
 * quotas (the generation jobs' quota: jobs queued or running, stored bytes), record the job in KV
 * `jobs` (queued) and put it on the `JOBS` work queue for an export worker
 * (consumers/export/export-worker.ts). Always asynchronous: the answer is the job to poll.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { ApiError } from '../../../contracts/errors.ts';
import {
  EXPORT_JOB_SUBJECT,
  EXPORT_MAX_RANGE_MS,
  EXPORT_MAX_SCANNED,
  type ExportJobMessage,
  ExportRequest,
  type ExportSelection,
  newExportJobId,
} from '../../../contracts/export.ts';
import type { JobRecord } from '../../../contracts/jobs.ts';
import { STREAMS } from '../../../contracts/streams.ts';
import { ensureFreeDisk } from '../../../platform/disk-space.ts';
import type { Bucket } from '../../../platform/kv.ts';
import { encode } from '../../../platform/msgpack.ts';
import type { Nats } from '../../../platform/nats.ts';
import { seqAtOrBefore, seqBefore } from '../../../platform/stream-time.ts';
import type { Principal } from '../../core/guard.ts';
import { parseWith } from '../../core/validate.ts';
import type { GenerationOptions } from '../generation/generation-service.ts';
import { JobQuota } from '../generation/job-quota.ts';

export type ExportAccepted = {
  status: 'queued';
  job_id: string;
  status_url: string;
  format: 'parquet' | 'csv';
  from_ms: number;
  to_ms: number;
  /** The stream positions the range resolved to (`first_seq > last_seq`: nothing stored in it). */
  first_seq: number;
  last_seq: number;
  request_hash: string;
};

export type ExportContext = { principal: Principal | null; baseUrl: string };

const sorted = (v: readonly string[] | undefined): string[] | null => (v ? [...v].sort() : null);

const rangeError = (field: string, reason: string) =>
  new ApiError('invalid_time_range', `${field} ${reason}`, { field, reason });

export class ExportService {
  private readonly quota: JobQuota;

  constructor(
    private readonly nats: Nats,
    private readonly jobs: Bucket<JobRecord>,
    private readonly opts: Pick<GenerationOptions, 'artifactsDir' | 'minFreeDiskBytes' | 'quota'>,
    private readonly now: () => number = Date.now,
  ) {
    this.quota = new JobQuota(jobs, opts.quota);
  }

  async export(body: unknown, ctx: ExportContext): Promise<ExportAccepted> {
    const req = parseWith(ExportRequest, body);
    if (req.from > req.to) throw rangeError('from', 'is after to');
    if (req.to - req.from > EXPORT_MAX_RANGE_MS)
      throw rangeError('to', `is more than ${EXPORT_MAX_RANGE_MS / 86_400_000} days after from`);
    if (req.to > this.now())
      throw rangeError('to', 'is in the future: an export covers events already stored');
    await ensureFreeDisk(this.opts.artifactsDir, this.opts.minFreeDiskBytes);
    const accountId = ctx.principal?.accountId ?? null;
    const selection: ExportSelection = {
      coins: [...req.coins].sort(),
      sources: sorted(req.sources),
      event_types: sorted(req.event_types),
      account_id: accountId,
    };
    const firstSeq = (await seqBefore(this.nats, STREAMS.MD, req.from)) + 1;
    const lastSeq = await seqAtOrBefore(this.nats, STREAMS.MD, req.to);
    const scanned = lastSeq - firstSeq + 1;
    if (scanned > EXPORT_MAX_SCANNED)
      throw rangeError(
        'to',
        `the range holds ${scanned.toLocaleString('en-US')} stored events (every coin); at most ${EXPORT_MAX_SCANNED.toLocaleString('en-US')}: export a shorter range`,
      );
    // What the job reads: hashed as the request's identity, and sent as the job's message.
    const range = {
      selection,
      format: req.format,
      from_ms: req.from,
      to_ms: req.to,
      first_seq: firstSeq,
      last_seq: lastSeq,
    };
    const hashed = canonicalize(range);
    const requestHash = `sha256:${createHash('sha256')
      .update(hashed ?? '')
      .digest('hex')}`;
    const jobId = newExportJobId();
    const now = this.now();
    const record: JobRecord = {
      job_id: jobId,
      account_id: accountId,
      status: 'queued',
      manifest_hash: requestHash,
      duration_seconds: (req.to - req.from) / 1_000,
      symbol: selection.coins.join(','),
      created_at: now,
      started_at: null,
      finished_at: null,
      attempts: 0,
      progress: { rows_done: 0, rows_total: Math.max(0, scanned) },
      artifact: null,
      error: null,
      kind: 'export',
      format: req.format,
    };
    const message: ExportJobMessage = {
      job_id: jobId,
      ...range,
      request_hash: requestHash,
      requested_at: now,
    };
    if (accountId) await this.quota.admit(accountId, jobId);
    try {
      await this.jobs.put(jobId, record);
      await this.nats.js.publish(EXPORT_JOB_SUBJECT, encode(message), { msgID: jobId });
    } catch (err) {
      await this.jobs.delete(jobId).catch(() => {});
      if (accountId) await this.quota.release(accountId, jobId).catch(() => {});
      throw err;
    }
    return {
      status: 'queued',
      job_id: jobId,
      status_url: `${ctx.baseUrl}/data/jobs/${jobId}`,
      format: req.format,
      from_ms: req.from,
      to_ms: req.to,
      first_seq: firstSeq,
      last_seq: lastSeq,
      request_hash: requestHash,
    };
  }
}

/** The `result` of a completed export job (GET /data/jobs/{id}). */
export function exportResult(job: JobRecord, baseUrl: string) {
  const a = job.artifact as NonNullable<JobRecord['artifact']>;
  return {
    status: 'completed' as const,
    job_id: job.job_id,
    format: job.format ?? 'parquet',
    download_url: `${baseUrl}/artifacts/${a.file}`,
    row_count: a.row_count,
    storage_backend: a.storage_backend ?? 'local',
    content_length_bytes: a.content_length_bytes,
    sha256: a.sha256 ?? null,
    request_hash: job.manifest_hash,
  };
}
