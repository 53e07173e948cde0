/**
 * A generation job never waits forever for a task JetStream stopped delivering (issue 15).
 *
 * The queue consumers are first created as an older release left them (`max_deliver` 4): the
 * workers must lift that limit, since JetStream drops a message silently after its last delivery
 * and the job's coordinator then waits for an outcome nobody will write.
 *
 * - A window worker stopped gracefully, again and again, in the middle of the job's one window
 *   (more times than the delivery limit): every stop hands the task over without using an
 *   attempt, the coordinator itself is stopped gracefully once too, and the job completes with
 *   one attempt and an artifact byte-identical (SHA-256) to an uninterrupted run.
 * - A window (then a job) lost on every delivery, including the delivery that should record the
 *   failure: the test takes those deliveries and never acks them, which is exactly what JetStream
 *   sees of a worker killed (-9) right after taking a task. JetStream keeps delivering, the next
 *   live worker records the failure, and the job fails with a message naming the window and the
 *   count, within a deadline.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy } from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { generateDataset } from '../../consumers/generation/generate.ts';
import { openJobsBucket, startJobWorker, WORKER_DURABLE } from '../../consumers/generation/job-worker.ts';
import {
  openWindowOutcomes,
  startWindowWorker,
  WINDOW_DURABLE,
} from '../../consumers/generation/window-queue.ts';
import {
  JOB_SUBJECT,
  type JobRecord,
  MAX_JOB_DELIVERIES,
  newJobId,
  queuedJob,
  WINDOW_SUBJECT_ALL,
  windowKey,
} from '../../contracts/jobs.ts';
import { normalizeManifest } from '../../contracts/manifest.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { LocalArtifactStore } from '../../platform/artifact-store/local.ts';
import { createLogger, type Logger } from '../../platform/logger.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { within } from '../support/within.ts';

const ACK_WAIT_MS = 2_000;
/** Longest a job may take to end once a live worker can reach its tasks (generous: loaded CI). */
const END_DEADLINE_MS = 45_000;
const dir = mkdtempSync(join(tmpdir(), 'mdp-window-lost-'));
const artifactsDir = join(dir, 'artifacts');
const tmpDir = join(dir, 'tmp');
const store = new LocalArtifactStore(artifactsDir);
const silent = createLogger('silent');
const config = testConfig();
let server: TestNats;
let nats: Nats;
/** Workers started by the running test, stopped after it whatever happened. */
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  // Both queue consumers as the previous release created them: JetStream gave up after 4 deliveries.
  for (const [durable, filter] of [
    [WORKER_DURABLE, JOB_SUBJECT],
    [WINDOW_DURABLE, WINDOW_SUBJECT_ALL],
  ] as const)
    await nats.jsm.consumers.add(STREAMS.JOBS, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: filter,
      ack_wait: nanos(ACK_WAIT_MS),
      max_deliver: MAX_JOB_DELIVERIES + 1,
    });
}, 60_000);

afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

type Line = Record<string, unknown> & { msg?: string };

/** A debug logger that hands every line to `onLine` as it is written (synchronously). */
const capturingLogger = (onLine: (line: Line) => void): Logger =>
  pino({ level: 'debug' }, { write: (s: string) => onLine(JSON.parse(s) as Line) });

const body = { config: { symbol: 'ETH', seed: 7 }, duration_seconds: 1800, driver: { window_seconds: 1800 } };
const manifest = normalizeManifest(body).manifest;

/** Queues a one-window job as the gateway does (record, then message). */
async function submit(jobId: string): Promise<void> {
  const { record, message } = queuedJob(jobId, null, manifest, Date.now());
  await (await openJobsBucket(nats)).put(jobId, record);
  await nats.js.publish(JOB_SUBJECT, encode(message), { msgID: jobId });
}

const record = async (jobId: string): Promise<JobRecord | null> => (await openJobsBucket(nats)).get(jobId);

/** The job's record once completed or failed; fails past the deadline (the hang this file is about). */
const ended = (jobId: string): Promise<JobRecord> =>
  eventually(
    async () => {
      const r = await record(jobId);
      return (r?.status === 'completed' || r?.status === 'failed') && r;
    },
    END_DEADLINE_MS,
    `job ${jobId} ending (completed or failed)`,
    100,
  );

/**
 * Takes `count` deliveries of `jobId`'s task from `durable` and never acks them: to JetStream, a
 * worker killed right after taking the task. Resolves with their delivery counts.
 */
async function loseDeliveries(durable: string, jobId: string, count: number): Promise<number[]> {
  const consumer = await nats.js.consumers.get(STREAMS.JOBS, durable);
  const counts: number[] = [];
  const deadline = Date.now() + 60_000;
  while (counts.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${counts.length} of ${count} deliveries within 60 s`);
    const msg = await consumer.next({ expires: 5_000 });
    if (!msg) continue;
    // A task of an earlier test's finished job (a duplicate): not ours to lose.
    if (!msg.subject.includes(jobId) && !msg.string().includes(jobId)) {
      msg.ack();
      continue;
    }
    counts.push(msg.info.deliveryCount);
  }
  return counts;
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

it('completes a job whose window worker and coordinator are stopped gracefully mid-job, more often than the limit', async () => {
  const jobId = newJobId();
  const opts = { artifactsDir, tmpDir, ackWaitMs: ACK_WAIT_MS, minFreeDiskBytes: 0 };
  const coordinator = await startJobWorker(nats, silent, { ...opts, windowLanes: 0 });
  running.push(coordinator);
  await submit(jobId);
  await eventually(async () => (await record(jobId))?.status === 'running', 30_000, 'the job running');

  const starts: Line[] = [];
  const handovers: Line[] = [];
  const stops = MAX_JOB_DELIVERIES + 1;
  for (let stop = 1; stop <= stops; stop++) {
    let started: () => void = () => {};
    const windowStarted = new Promise<void>((resolve) => (started = resolve));
    const log = capturingLogger((l) => {
      if (l.msg === 'task handed over (shutting down)' && String(l.subject).includes(jobId))
        handovers.push(l);
      if (l.msg !== 'window task started' || l.job !== jobId) return;
      starts.push(l);
      started();
    });
    const lanes = await startWindowWorker(nats, log, { store, tmpDir, ackWaitMs: ACK_WAIT_MS, lanes: 1 });
    running.push(lanes);
    await within(windowStarted, 30_000, `window worker ${stop} starting the window`);
    // Stopped while the window runs: the stop follows its start with no I/O in between, so the
    // window's thread cannot have answered yet.
    await lanes.stop();
    expect(await (await openWindowOutcomes(nats)).get(windowKey(jobId, 0))).toBeNull();
    expect(handovers.length).toBe(stop);
  }
  // The coordinator too, while it waits for the window: the job goes to the next one.
  await coordinator.stop();
  expect((await record(jobId))?.status).toBe('running');

  running.push(await startJobWorker(nats, silent, { ...opts, windowLanes: 1 }));
  const job = await ended(jobId);
  expect(job.error).toBeNull();
  expect(job.status).toBe('completed');
  expect(job.attempts).toBe(1);
  expect(starts.length).toBe(stops);
  // Every hand-over kept the window at its first attempt.
  expect(handovers.map((l) => l.attempt)).toEqual(Array(stops).fill(1));

  const uninterrupted = await generateDataset({
    manifest,
    jobId,
    outPath: join(dir, 'uninterrupted.parquet'),
    tmpDir: join(dir, 'tmp-uninterrupted'),
  });
  expect(job.artifact?.row_count).toBe(uninterrupted.rowCount);
  const served = readFileSync(store.locate(`${jobId}.parquet`));
  expect(sha256(served)).toBe(sha256(readFileSync(uninterrupted.path)));

  // JetStream never gives up on a task: the workers lifted the old release's limit.
  for (const durable of [WORKER_DURABLE, WINDOW_DURABLE])
    expect((await nats.jsm.consumers.info(STREAMS.JOBS, durable)).config.max_deliver).toBe(-1);
}, 150_000);

it('fails a job whose window is lost on every delivery, naming the window and the count', async () => {
  const jobId = newJobId();
  const opts = { artifactsDir, tmpDir, ackWaitMs: ACK_WAIT_MS, minFreeDiskBytes: 0 };
  running.push(await startJobWorker(nats, silent, { ...opts, windowLanes: 0 }));
  await submit(jobId);
  // Every delivery the old consumer allowed, the last one included, taken by a worker that died.
  const lost = MAX_JOB_DELIVERIES + 1;
  const counts = await loseDeliveries(WINDOW_DURABLE, jobId, lost);
  expect(counts).toEqual(Array.from({ length: lost }, (_, i) => i + 1));

  running.push(await startWindowWorker(nats, silent, { store, tmpDir, ackWaitMs: ACK_WAIT_MS, lanes: 1 }));
  const job = await ended(jobId);
  expect(job.status).toBe('failed');
  expect(job.error?.message).toMatch(new RegExp(`^window 0 .*stopped ${lost} times`));
  expect(await (await openWindowOutcomes(nats)).get(windowKey(jobId, 0))).toBeNull();
}, 150_000);

it('fails a job whose coordinator is lost on every delivery, naming the count', async () => {
  const jobId = newJobId();
  await submit(jobId);
  const lost = MAX_JOB_DELIVERIES + 1;
  const counts = await loseDeliveries(WORKER_DURABLE, jobId, lost);
  expect(counts).toEqual(Array.from({ length: lost }, (_, i) => i + 1));

  const opts = { artifactsDir, tmpDir, ackWaitMs: ACK_WAIT_MS, minFreeDiskBytes: 0 };
  running.push(await startJobWorker(nats, silent, { ...opts, windowLanes: 0 }));
  const job = await ended(jobId);
  expect(job.status).toBe('failed');
  expect(job.error?.message).toMatch(new RegExp(`stopped ${lost} times`));
}, 150_000);
