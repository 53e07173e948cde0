/**
 * A generation worker: takes jobs from the `JOBS` work queue (one durable pull consumer shared by
 * every worker process, so each job goes to one worker), spreads the job's windows over every
 * worker process (queued-generation.ts, window-queue.ts), stitches their parts into the artifact,
 * and records progress and the outcome in KV `jobs`. While generating it tells JetStream it is still working;
 * if it dies the job is redelivered to another worker, without limit on JetStream's side: the
 * delivery that would be attempt `maxDeliveries` + 1 fails the job instead of running it, so a job
 * always ends (delivery rules: queue-delivery.ts). A worker stopped gracefully hands the job over
 * to the next one without using an attempt; the windows already written stay for it.
 * The artifact is stored (local directory or JetStream Object Store) whole before the record says
 * `completed`, so every gateway can serve it at once; a job whose upload failed is `failed`.
 * A job is not started while the artifacts disk has less than `minFreeDiskBytes` free, and a disk
 * that fills up during a job fails it: both fail with `storage_full` (503 to a waiting client).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import {
  JOB_SUBJECT,
  type JobMessage,
  type JobRecord,
  MAX_JOB_DELIVERIES,
  type WindowOutcome,
} from '../../contracts/jobs.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import { freeBytes, storageFullError } from '../../platform/disk-space.ts';
import { type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import { generationJobs, generationRows, registerLagSource } from '../../platform/metrics.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { startExportWorker } from '../export/export-worker.ts';
import { throttledProgress } from '../job-progress.ts';
import { runJobQueue } from '../job-queue-loop.ts';
import { GenerationError } from './generate.ts';
import { attemptOf, ensureQueueConsumer, handOver } from './queue-delivery.ts';
import { generateOnQueue } from './queued-generation.ts';
import { openWindowOutcomes, startWindowWorker, type WindowWorker } from './window-queue.ts';
import type { WorkerPool } from './worker-pool.ts';

export const WORKER_DURABLE = 'generation-workers';

export const openJobsBucket = (nats: Nats): Promise<Bucket<JobRecord>> =>
  openBucket<JobRecord>(nats, KV_BUCKETS.jobs, { ttlMs: 30 * 86_400_000 });

/** `ackWaitMs`: how long a silent worker keeps a job before it is redelivered (it reports every third of it). */
export type JobWorkerOptions = {
  /** Local artifacts directory: the `local` store, leftovers, and the free-disk check. */
  artifactsDir: string;
  /** Where artifacts go (default: the local store in `artifactsDir`). */
  store?: ArtifactStore;
  tmpDir?: string;
  progressEveryMs?: number;
  ackWaitMs?: number;
  /** Free bytes the artifacts disk must have for a job to start (default 0: not checked). */
  minFreeDiskBytes?: number;
  /** Window lanes this worker runs for every job on the queue (default 1; 0: none, another worker's run them). */
  windowLanes?: number;
  /**
   * The process's warm window threads (`createWorkerPool`, owned and closed by the caller); the
   * lanes run on them. Without it the lanes start a pool of their own, closed on `stop`.
   */
  pool?: WorkerPool;
  /** Attempts (deliveries whose worker died) before a job or window is failed (`JOB_MAX_DELIVERIES`). */
  maxDeliveries?: number;
  /** Whether this worker also takes range exports (`jobs.export`, consumers/export/; default true). */
  exports?: boolean;
  /** The process's `MD` archive, read by its range exports (consumers/export/md-archive.ts). */
  archiveDir?: string;
};

const DEFAULT_ACK_WAIT_MS = 30_000;

export const ensureWorkerConsumer = (nats: Nats, ackWaitMs = DEFAULT_ACK_WAIT_MS): Promise<void> =>
  ensureQueueConsumer(nats, WORKER_DURABLE, JOB_SUBJECT, ackWaitMs);

export type JobWorker = { stop(): Promise<void> };

export async function startJobWorker(nats: Nats, log: Logger, opts: JobWorkerOptions): Promise<JobWorker> {
  await sweepLeftovers(opts, log);
  await ensureWorkerConsumer(nats, opts.ackWaitMs);
  const jobs = await openJobsBucket(nats);
  const outcomes = await openWindowOutcomes(nats);
  const store = opts.store ?? new LocalArtifactStore(opts.artifactsDir);
  const lanes = opts.windowLanes ?? 1;
  const windowWorker: WindowWorker | null =
    lanes > 0
      ? await startWindowWorker(nats, log, {
          store,
          ackWaitMs: opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
          lanes,
          maxDeliveries: opts.maxDeliveries ?? MAX_JOB_DELIVERIES,
          ...(opts.tmpDir ? { tmpDir: opts.tmpDir } : {}),
          ...(opts.pool ? { pool: opts.pool } : {}),
        })
      : null;
  const exporter =
    opts.exports === false
      ? null
      : await startExportWorker(nats, log, {
          store,
          jobs,
          ackWaitMs: opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS,
          maxDeliveries: opts.maxDeliveries ?? MAX_JOB_DELIVERIES,
          ...(opts.tmpDir ? { tmpDir: opts.tmpDir } : {}),
          ...(opts.archiveDir ? { archiveDir: opts.archiveDir } : {}),
        });
  const ctx: JobContext = { nats, jobs, outcomes, store, log, opts };
  const abort = new AbortController();
  const unregisterLag = registerLagSource(WORKER_DURABLE, async () => {
    const info = await nats.jsm.consumers.info(STREAMS.JOBS, WORKER_DURABLE);
    return info.num_pending + info.num_ack_pending;
  });
  const loop = runJobQueue(
    nats,
    WORKER_DURABLE,
    (msg) => runJob(msg, ctx, abort.signal),
    log,
    'job worker',
    abort.signal,
  );
  return {
    async stop() {
      abort.abort();
      unregisterLag();
      await Promise.all([loop, windowWorker?.stop(), exporter?.stop()]);
    },
  };
}

type JobContext = {
  nats: Nats;
  jobs: Bucket<JobRecord>;
  outcomes: Bucket<WindowOutcome>;
  store: ArtifactStore;
  log: Logger;
  opts: JobWorkerOptions;
};

async function runJob(msg: JsMsg, ctx: JobContext, signal: AbortSignal): Promise<void> {
  const { jobs, log, opts, store } = ctx;
  const job = decode<JobMessage>(msg.data);
  const record = (await jobs.get(job.job_id)) ?? null;
  if (!record || record.status === 'completed' || record.status === 'failed') return msg.ack();
  const attempts = attemptOf(msg);
  const limit = opts.maxDeliveries ?? MAX_JOB_DELIVERIES;
  if (attempts > limit) {
    const message = `generation failed: its worker stopped ${attempts - 1} times (limit: ${limit} attempts)`;
    log.error({ job: job.job_id, attempts, limit }, 'generation job failed: attempts used up');
    await jobs.put(job.job_id, finished(record, 'failed', { error: { code: 'internal', message } }));
    generationJobs.inc({ status: 'failed' });
    return msg.term();
  }
  if (signal.aborted) return handOver(ctx.nats, msg, log); // taken while stopping
  const minFree = opts.minFreeDiskBytes ?? 0;
  const free = minFree > 0 ? await freeBytes(opts.artifactsDir) : Number.POSITIVE_INFINITY;
  if (free < minFree) {
    const error = { code: 'storage_full', message: storageFullError(free, minFree).message };
    await jobs.put(job.job_id, finished(record, 'failed', { attempts, error }));
    generationJobs.inc({ status: 'failed' });
    return msg.term();
  }
  let current: JobRecord = { ...record, status: 'running', attempts, started_at: Date.now() };
  await jobs.put(job.job_id, current);
  log.info({ job: job.job_id, attempts }, 'generation job started');
  const heartbeat = setInterval(() => msg.working(), (opts.ackWaitMs ?? DEFAULT_ACK_WAIT_MS) / 3);
  try {
    const file = `${job.job_id}.parquet`;
    const result = await generateOnQueue({
      nats: ctx.nats,
      outcomes: ctx.outcomes,
      store,
      manifest: job.manifest,
      jobId: job.job_id,
      name: file,
      signal,
      onProgress: throttledProgress(opts.progressEveryMs ?? 250, (progress) => {
        current = { ...current, progress };
        void jobs.put(job.job_id, current).catch(() => {});
      }),
    });
    const artifact = {
      file,
      row_count: result.rowCount,
      content_length_bytes: result.bytes,
      storage_backend: store.backend,
    };
    await jobs.put(
      job.job_id,
      finished(current, 'completed', {
        artifact,
        progress: { rows_done: result.rowCount, rows_total: result.rowCount },
      }),
    );
    log.info({ job: job.job_id, rows: result.rowCount, bytes: result.bytes }, 'generation job completed');
    generationJobs.inc({ status: 'completed' });
    generationRows.inc(result.rowCount);
    msg.ack();
  } catch (err) {
    // Shutting down: the next worker takes the job (and its windows), no attempt used.
    if (signal.aborted) return handOver(ctx.nats, msg, log);
    const error = diskFull(err)
      ? { code: 'storage_full', message: 'the artifact store filled up during generation' }
      : {
          code: 'internal',
          message: err instanceof GenerationError ? err.message : 'generation failed unexpectedly',
        };
    log.error({ err: String(err), job: job.job_id }, 'generation job failed');
    await jobs.put(job.job_id, finished(current, 'failed', { error }));
    generationJobs.inc({ status: 'failed' });
    msg.term();
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * What a killed worker leaves behind: its part folder (`<tmpDir>/generation-*`) and a half-written
 * artifact (`.<job>.parquet.<uuid>.tmp`). Neither is ever served (only a completed job's file is);
 * they are removed when a worker starts, if older than an hour (a live job renames or removes its
 * own long before that).
 */
async function sweepLeftovers(opts: JobWorkerOptions, log: Logger): Promise<void> {
  const cutoff = Date.now() - 3_600_000;
  const sweep = async (dir: string | undefined, match: (name: string) => boolean) => {
    if (!dir) return;
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const path = join(dir, name);
      const info = await stat(path).catch(() => null);
      if (info && match(name) && info.mtimeMs < cutoff) {
        await rm(path, { recursive: true, force: true });
        log.info({ path }, 'removed a leftover of an interrupted job');
      }
    }
  };
  await sweep(opts.artifactsDir, (n) => n.startsWith('.') && n.endsWith('.tmp'));
  await sweep(opts.tmpDir, (n) => n.startsWith('generation-'));
}

/** Whether `err` (or one of its causes) is the disk or the object store bucket running out of space. */
function diskFull(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if ((e as { code?: unknown }).code === 'ENOSPC') return true;
    const message = String((e as { message?: unknown }).message ?? e);
    if (/no space left on device|maximum bytes exceeded|insufficient storage/i.test(message)) return true;
  }
  return false;
}

function finished(r: JobRecord, status: 'completed' | 'failed', extra: Partial<JobRecord>): JobRecord {
  return { ...r, ...extra, status, finished_at: Date.now() };
}
