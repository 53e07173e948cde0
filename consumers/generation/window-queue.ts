/**
 * Window workers: take window tasks of any job from the `JOBS` work queue (`jobs.window.>`, one
 * durable pull consumer shared by every worker process), write each window's ZSTD parts on a
 * worker thread (the same `runWindowTask` as everywhere, so the same bytes), put every part into
 * the artifact store as `parts/<job_id>/<part>` and record the window's outcome (part names and
 * footers) in KV `job_windows`, then ack. Every window ends with an outcome, so the job's
 * coordinator never waits forever (delivery rules: queue-delivery.ts): a worker that dies
 * mid-window never acks, and the window is redelivered after the ack wait to another worker,
 * without limit on JetStream's side; the delivery that would be attempt `maxDeliveries` + 1
 * records `{ok: false}` instead of running. A worker stopped gracefully hands its windows over
 * (no attempt used). A window that keeps failing is retried here (`driver.max_retries`,
 * backoff) first, then recorded as failed.
 */
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { JsMsg } from '@nats-io/jetstream';
import {
  type JobRecord,
  MAX_JOB_DELIVERIES,
  type StoredPartRef,
  WINDOW_SUBJECT_ALL,
  type WindowOutcome,
  type WindowTaskMessage,
  windowKey,
} from '../../contracts/jobs.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import type { ArtifactStore } from '../../platform/artifact-store/store.ts';
import { type Bucket, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { attemptOf, ensureQueueConsumer, handOver } from './queue-delivery.ts';
import { withRetries } from './retry.ts';
import type { WindowRunner } from './runner.ts';
import { localPart } from './stitch.ts';
import { createWorkerPool, type WorkerPool } from './worker-pool.ts';

export const WINDOW_DURABLE = 'generation-windows';

/** A job's parts in the store: `parts/<job_id>/w<window>-<segment>.parquet`. */
export const partName = (jobId: string, localPath: string): string => `parts/${jobId}/${basename(localPath)}`;

/** Outcomes live until their job is stitched; a day at most (a job abandoned by every worker). */
export const openWindowOutcomes = (nats: Nats): Promise<Bucket<WindowOutcome>> =>
  openBucket<WindowOutcome>(nats, KV_BUCKETS.jobWindows, { ttlMs: 86_400_000 });

export type WindowWorkerOptions = {
  /** Where parts go: the store the stitching worker reads (shared by every worker). */
  store: ArtifactStore;
  /** Local scratch for a window's part files before upload; default: the OS temp directory. */
  tmpDir?: string;
  ackWaitMs: number;
  /** Windows written at once, each on its own worker thread. */
  lanes: number;
  /**
   * The process's warm worker threads; the lanes run on a session of them and `stop` leaves them
   * running. Without it the window worker starts (and warms) a pool of `lanes` threads of its own
   * and closes it on `stop`.
   */
  pool?: WorkerPool;
  /** Attempts (deliveries whose worker died) before a window is failed; default MAX_JOB_DELIVERIES. */
  maxDeliveries?: number;
};

export type WindowWorker = { stop(): Promise<void> };

export async function startWindowWorker(
  nats: Nats,
  log: Logger,
  opts: WindowWorkerOptions,
): Promise<WindowWorker> {
  await ensureQueueConsumer(nats, WINDOW_DURABLE, WINDOW_SUBJECT_ALL, opts.ackWaitMs);
  const jobs = await openBucket<JobRecord>(nats, KV_BUCKETS.jobs, { ttlMs: 30 * 86_400_000 });
  const outcomes = await openWindowOutcomes(nats);
  const ownPool = opts.pool ? null : createWorkerPool(opts.lanes);
  // Threads load while the lanes wait for their first window; a window that comes first waits for them.
  if (ownPool) void ownPool.warm();
  const pool = (opts.pool ?? ownPool) as WorkerPool;
  const ctx: LaneContext = {
    nats,
    jobs,
    outcomes,
    runner: pool.session(opts.lanes),
    abort: new AbortController(),
    log,
    opts,
  };
  const lane = async (): Promise<void> => {
    while (!ctx.abort.signal.aborted) {
      try {
        const consumer = await nats.js.consumers.get(STREAMS.JOBS, WINDOW_DURABLE);
        const msg = await consumer.next({ expires: 2_000 });
        if (msg) await runWindow(msg, ctx);
      } catch (err) {
        if (!ctx.abort.signal.aborted) {
          log.warn({ err: String(err) }, 'window worker: fetch failed');
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
  };
  // No more lanes than threads to run them: a lane holds the window it fetched until it runs.
  const lanes = Array.from({ length: Math.min(opts.lanes, pool.size) }, lane);
  return {
    async stop() {
      ctx.abort.abort();
      await ctx.runner.close();
      await Promise.all(lanes);
      await ownPool?.close();
    },
  };
}

type LaneContext = {
  nats: Nats;
  jobs: Bucket<JobRecord>;
  outcomes: Bucket<WindowOutcome>;
  runner: WindowRunner;
  abort: AbortController;
  log: Logger;
  opts: WindowWorkerOptions;
};

const ended = (r: JobRecord | null): boolean => !r || r.status === 'completed' || r.status === 'failed';

async function runWindow(msg: JsMsg, ctx: LaneContext): Promise<void> {
  const task = decode<WindowTaskMessage>(msg.data);
  const { job_id: jobId, window } = task;
  const key = windowKey(jobId, window.index);
  if (ended(await ctx.jobs.get(jobId)) || (await ctx.outcomes.get(key))) return msg.ack();
  const attempt = attemptOf(msg);
  const limit = ctx.opts.maxDeliveries ?? MAX_JOB_DELIVERIES;
  if (attempt > limit) {
    // The coordinator names the window; this says why it has no parts.
    const message = `its worker stopped ${attempt - 1} times before recording an outcome (limit: ${limit} attempts)`;
    ctx.log.error(
      { job: jobId, window: window.index, attempt, limit },
      'window task failed: attempts used up',
    );
    await ctx.outcomes.put(key, { ok: false, message });
    return msg.term();
  }
  if (ctx.abort.signal.aborted) return handOver(ctx.nats, msg, ctx.log); // taken while stopping
  const { store, ackWaitMs } = ctx.opts;
  const heartbeat = setInterval(() => msg.working(), ackWaitMs / 3);
  const tmpRoot = ctx.opts.tmpDir ?? tmpdir();
  await mkdir(tmpRoot, { recursive: true });
  const partDir = await mkdtemp(join(tmpRoot, 'generation-'));
  const uploaded: string[] = [];
  const delivery = msg.info.deliveryCount;
  ctx.log.debug({ job: jobId, window: window.index, delivery, attempt }, 'window task started');
  try {
    const policy = { maxRetries: task.max_retries, backoffSeconds: task.backoff_seconds };
    const result = await withRetries(
      (retry) => ctx.runner.run({ config: task.config, window, partDir, attempt: retry }),
      policy,
      ctx.abort.signal,
    );
    const parts: StoredPartRef[] = [];
    for (const path of result.parts) {
      const { footer, bodyLength } = await localPart(path);
      const name = partName(jobId, path);
      uploaded.push(name);
      await store.put(name, createReadStream(path, { highWaterMark: 1 << 20 }));
      parts.push({ name, footer, body_length: bodyLength });
    }
    // A job that ended meanwhile (failed elsewhere) has discarded its parts: do not leave ours.
    if (ended(await ctx.jobs.get(jobId))) {
      await Promise.all(uploaded.map((n) => store.delete(n).catch(() => false)));
      return msg.ack();
    }
    await ctx.outcomes.put(key, { ok: true, rows: result.rows, parts });
    ctx.log.debug({ job: jobId, window: window.index, rows: result.rows }, 'window task done');
    msg.ack();
  } catch (err) {
    // Shutting down: another worker takes the window, and this stop uses none of its attempts.
    if (ctx.abort.signal.aborted) return handOver(ctx.nats, msg, ctx.log);
    const message = err instanceof Error ? err.message : String(err);
    ctx.log.error({ err: message, job: jobId, window: window.index }, 'window task failed');
    await Promise.all(uploaded.map((n) => store.delete(n).catch(() => false)));
    await ctx.outcomes.put(key, { ok: false, message });
    msg.term();
  } finally {
    clearInterval(heartbeat);
    await rm(partDir, { recursive: true, force: true });
  }
}
