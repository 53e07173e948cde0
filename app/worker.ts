/**
 * Generation workers: WORKER_CONCURRENCY consumers of the job queue and WINDOW_CONCURRENCY window
 * lanes (worker threads writing any job's windows, started once with the process and reused by
 * every job), storing to ARTIFACT_STORE. A job or window whose
 * worker keeps dying is failed after JOB_MAX_DELIVERIES attempts (consumers/generation/queue-delivery.ts).
 */
import { join } from 'node:path';
import { startMdArchiver } from '../consumers/export/md-archiver.ts';
import { type JobWorker, startJobWorker } from '../consumers/generation/job-worker.ts';
import { createWorkerPool } from '../consumers/generation/worker-pool.ts';
import { artifactStoreSettings, artifactsDirOf } from '../gateways/http/app.ts';
import { openArtifactStores } from '../platform/artifact-store/open.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';

export async function startWorker(nats: Nats, config: Config, log: Logger): Promise<Stoppable> {
  const stores = await openArtifactStores(nats, artifactStoreSettings(config));
  // The process's window threads, started now and kept warm across jobs (each costs over a CPU-second
  // to start); closed after the job consumers have stopped.
  const pool = createWorkerPool(config.WINDOW_CONCURRENCY);
  void pool.warm();
  const workers: JobWorker[] = [];
  // One `MD` archive per process, read by its export workers.
  const archiveDir = config.MD_ARCHIVE
    ? (config.MD_ARCHIVE_DIR ?? join(config.DATA_DIR, 'md-archive'))
    : undefined;
  // The archive only speeds exports up: a worker that cannot keep one (its directory not
  // writable, or kept by another process) still works, exporting from what `MD` holds.
  const archiver = archiveDir
    ? await startMdArchiver(nats, log, {
        dir: archiveDir,
        segmentSeqs: config.MD_ARCHIVE_SEGMENT_SEQS,
        flushMs: config.MD_ARCHIVE_FLUSH_S * 1_000,
      }).catch((err) => {
        log.warn({ err: String(err), dir: archiveDir }, 'md archive: not kept by this worker');
        return null;
      })
    : null;
  try {
    for (let i = 0; i < config.WORKER_CONCURRENCY; i++)
      workers.push(
        await startJobWorker(nats, log, {
          artifactsDir: artifactsDirOf(config),
          store: stores.primary,
          tmpDir: join(config.DATA_DIR, 'tmp'),
          ackWaitMs: config.JOB_ACK_WAIT_MS,
          maxDeliveries: config.JOB_MAX_DELIVERIES,
          minFreeDiskBytes: config.MIN_FREE_DISK_BYTES,
          // One set of window lanes per process, started with the first job consumer.
          windowLanes: i === 0 ? config.WINDOW_CONCURRENCY : 0,
          pool,
          ...(archiveDir ? { archiveDir } : {}),
        }),
      );
  } catch (error) {
    await Promise.all([...workers.map((w) => w.stop()), archiver?.stop()]);
    await pool.close();
    throw error;
  }
  const stop = async (): Promise<void> => {
    await Promise.all([...workers.map((w) => w.stop()), archiver?.stop()]);
    await pool.close();
  };
  return { name: 'worker', stop };
}
