/**
 * Generation jobs: the message on the `JOBS` work queue and the status record in KV `jobs`.
 * States: queued → running → completed | failed (a crashed worker's job goes back to running on
 * another worker until its attempts are used up, then failed; a worker stopped gracefully hands
 * the job over without using one). Delivery rules: consumers/generation/queue-delivery.ts.
 */

import { randomBase62 } from './api-key-format.ts';
import { manifestHash, type SimulationManifest } from './manifest.ts';

export const JOB_SUBJECT = 'jobs.generate';

/** `<prefix>_batch_<id>` per the spec. */
export const newJobId = (): string => `sim_batch_${randomBase62(16)}`;
/** A job id: a generation (`sim_batch_…`) or an export (`export_…`, contracts/export.ts). */
export const JOB_ID = /^(sim_batch|export)_[0-9A-Za-z]{16}$/;

export type JobMessage = {
  job_id: string;
  account_id: string | null;
  manifest: SimulationManifest;
  manifest_hash: string;
  requested_at: number;
};

export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';

export type JobRecord = {
  job_id: string;
  account_id: string | null;
  status: JobStatus;
  manifest_hash: string;
  duration_seconds: number;
  symbol: string;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** Attempts so far: deliveries to a worker that died, plus the current one (a hand-over is none). */
  attempts: number;
  progress: { rows_done: number; rows_total: number };
  /** Set when completed: the file is in the named store (absent in older records: `local`). */
  artifact: {
    file: string;
    row_count: number;
    content_length_bytes: number;
    storage_backend?: 'local' | 'nats';
    /** Hex SHA-256 of the file (exports). */
    sha256?: string;
  } | null;
  /** Absent: a generation job; `export`: a range export (contracts/export.ts). */
  kind?: 'export';
  /** An export's file format. */
  format?: 'parquet' | 'csv';
  /** Set when failed: a message safe to show. */
  error: { code: string; message: string } | null;
};

/** A new job as it is queued: its `queued` record (KV `jobs`) and its message (`JOB_SUBJECT`). */
export function queuedJob(
  jobId: string,
  accountId: string | null,
  manifest: SimulationManifest,
  now: number,
): { record: JobRecord; message: JobMessage } {
  const hash = manifestHash(manifest);
  const record: JobRecord = {
    job_id: jobId,
    account_id: accountId,
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
  const message = { job_id: jobId, account_id: accountId, manifest, manifest_hash: hash, requested_at: now };
  return { record, message };
}

/**
 * Default of `JOB_MAX_DELIVERIES`: attempts (deliveries whose worker died) before a job or window
 * whose worker keeps dying is failed.
 */
export const MAX_JOB_DELIVERIES = 3;

/**
 * Header of a job or window task handed over by a worker stopped gracefully: the attempts its
 * earlier copies used (decimal), so that a stop never counts as one and a crash always does.
 */
export const PRIOR_ATTEMPTS_HEADER = 'Mdp-Prior-Attempts';

/**
 * Key of an account's quota ledger in KV `jobs`, beside its job records (`sim_batch_*`): one value
 * per account, changed only by compare-and-swap, so every gateway process counts the same jobs.
 */
export const quotaKey = (accountId: string): string => `quota.${accountId}`;

/** What an account holds against its quotas (see gateways/http/generation/job-quota.ts). */
export type AccountJobLedger = {
  /** Jobs admitted and not yet seen finished: job id → admitted at (Unix ms). */
  active: Record<string, number>;
  /**
   * Bytes of completed artifacts still within retention, grouped: `[counts until (Unix ms), bytes]`.
   * An entry stops counting once the retention sweep has removed every file it covers.
   */
  stored: [number, number][];
};

/**
 * Window tasks of a job, on the same `JOBS` work queue: `jobs.window.<job_id>.<index>`, taken by
 * any worker process (durable `generation-windows`, its own filter, so jobs and windows never
 * share a consumer). The worker that took the job publishes them and stitches the parts.
 */
export const WINDOW_SUBJECT_ALL = 'jobs.window.>';
export const windowSubject = (jobId: string, index: number): string => `jobs.window.${jobId}.${index}`;
/** Key of a window's outcome in KV `job_windows`. */
export const windowKey = (jobId: string, index: number): string => `${jobId}.${index}`;

/** One window to write: plain data (MessagePack). */
export type WindowTaskMessage = {
  job_id: string;
  /** The manifest's model config. */
  config: SimulationManifest['config'];
  window: { index: number; fromMs: number; toMs: number };
  max_retries: number;
  backoff_seconds: number;
};

/** A written part in the artifact store: its name, FileMetaData and column-chunk bytes. */
export type StoredPartRef = { name: string; footer: Uint8Array; body_length: number };

/** What a window worker records in KV `job_windows` when done: its parts in order, or why it failed. */
export type WindowOutcome =
  | { ok: true; rows: number; parts: StoredPartRef[] }
  | { ok: false; message: string };
