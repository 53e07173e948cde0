/**
 * Export jobs on the generation queue's plumbing: the `JOBS` work queue (subject `jobs.export`,
 * durable `export-workers`, shared by every worker process), the job records in KV `jobs`
 * (queued → running → completed | failed, progress), the delivery rules (queue-delivery.ts:
 * attempts, hand-over on a graceful stop) and the artifact store (owner check, Range and
 * retention are the artifacts'). Started by every generation job worker (job-worker.ts).
 * The file is written locally by DuckDB (export-range.ts), then stored whole, its SHA-256
 * computed as it is stored, before the record says `completed`.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import { EXPORT_JOB_SUBJECT, type ExportJobMessage } from '../../contracts/export.ts';
import { type JobRecord, MAX_JOB_DELIVERIES } from '../../contracts/jobs.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import type { Bucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { attemptOf, ensureQueueConsumer, handOver } from '../generation/queue-delivery.ts';
import { throttledProgress } from '../job-progress.ts';
import { runJobQueue } from '../job-queue-loop.ts';
import { ExportError, exportRange } from './export-range.ts';

export const EXPORT_DURABLE = 'export-workers';

export type ExportWorkerOptions = {
  store: ArtifactStore;
  jobs: Bucket<JobRecord>;
  tmpDir?: string;
  ackWaitMs?: number;
  progressEveryMs?: number;
  maxDeliveries?: number;
  /** The `MD` archive this process keeps (md-archive.ts). */
  archiveDir?: string;
};

export type ExportWorker = { stop(): Promise<void> };

const DEFAULT_ACK_WAIT_MS = 30_000;

/** Stores the local file `path` as `name`, hashing it on the way; resolves with size and hex SHA-256. */
export async function storeHashed(
  store: ArtifactStore,
  name: string,
  path: string,
): Promise<{ bytes: number; sha256: string }> {
  const hash = createHash('sha256');
  async function* hashed(): AsyncGenerator<Uint8Array> {
    for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
      hash.update(chunk as Buffer);
      yield chunk as Buffer;
    }
  }
  const bytes = await store.put(name, hashed());
  return { bytes, sha256: hash.digest('hex') };
}

export async function startExportWorker(
  nats: Nats,
  log: Logger,
  opts: ExportWorkerOptions,
): Promise<ExportWorker> {
  const ackWaitMs = opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS;
  await ensureQueueConsumer(nats, EXPORT_DURABLE, EXPORT_JOB_SUBJECT, ackWaitMs);
  const abort = new AbortController();
  const loop = runJobQueue(
    nats,
    EXPORT_DURABLE,
    (msg) => runExport(nats, msg, log, opts, abort.signal),
    log,
    'export worker',
    abort.signal,
  );
  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}

const finished = (r: JobRecord, status: 'completed' | 'failed', extra: Partial<JobRecord>): JobRecord => ({
  ...r,
  ...extra,
  status,
  finished_at: Date.now(),
});

async function runExport(
  nats: Nats,
  msg: JsMsg,
  log: Logger,
  opts: ExportWorkerOptions,
  signal: AbortSignal,
): Promise<void> {
  const { jobs, store } = opts;
  const job = decode<ExportJobMessage>(msg.data);
  const record = await jobs.get(job.job_id);
  if (!record || record.status === 'completed' || record.status === 'failed') return msg.ack();
  const attempts = attemptOf(msg);
  const limit = opts.maxDeliveries ?? MAX_JOB_DELIVERIES;
  if (attempts > limit) {
    const message = `export failed: its worker stopped ${attempts - 1} times (limit: ${limit} attempts)`;
    await jobs.put(job.job_id, finished(record, 'failed', { error: { code: 'internal', message } }));
    return msg.term();
  }
  if (signal.aborted) return handOver(nats, msg, log);
  let current: JobRecord = { ...record, status: 'running', attempts, started_at: Date.now() };
  await jobs.put(job.job_id, current);
  const heartbeat = setInterval(() => msg.working(), (opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS) / 3);
  if (opts.tmpDir) await mkdir(opts.tmpDir, { recursive: true });
  const dir = await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'export-job-'));
  try {
    const file = `${job.job_id}.${job.format}`;
    const local = join(dir, file);
    const { rows } = await exportRange(nats, {
      selection: job.selection,
      format: job.format,
      firstSeq: job.first_seq,
      lastSeq: job.last_seq,
      // The account's own events stored within the same instants (on `OWN`).
      fromMs: job.from_ms,
      toMs: job.to_ms,
      out: local,
      tmpDir: dir,
      signal,
      ...(opts.archiveDir ? { archiveDir: opts.archiveDir } : {}),
      onProgress: throttledProgress(opts.progressEveryMs ?? 250, (progress) => {
        current = { ...current, progress };
        void jobs.put(job.job_id, current).catch(() => {});
      }),
    });
    const { bytes, sha256 } = await storeHashed(store, file, local);
    const artifact = {
      file,
      row_count: rows,
      content_length_bytes: bytes,
      storage_backend: store.backend,
      sha256,
    };
    await jobs.put(
      job.job_id,
      finished(current, 'completed', { artifact, progress: { rows_done: rows, rows_total: rows } }),
    );
    log.info({ job: job.job_id, rows, bytes }, 'export job completed');
    msg.ack();
  } catch (err) {
    if (signal.aborted) return handOver(nats, msg, log);
    const message = err instanceof ExportError ? err.message : 'export failed unexpectedly';
    log.error({ err: String(err), job: job.job_id }, 'export job failed');
    await jobs.put(job.job_id, finished(current, 'failed', { error: { code: 'internal', message } }));
    msg.term();
  } finally {
    clearInterval(heartbeat);
    await rm(dir, { recursive: true, force: true });
  }
}
