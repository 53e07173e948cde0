/**
 * Generation jobs: the message on the `JOBS` work queue and the status record in KV `jobs`.
 * States: queued → running → completed | failed (a crashed worker's job goes back to running on
 * another worker until its delivery attempts are used up, then failed).
 */

import { randomBase62 } from './api-key-format.ts';
import type { SimulationManifest } from './manifest.ts';

export const JOB_SUBJECT = 'jobs.generate';

/** `<prefix>_batch_<id>` per the spec. */
export const newJobId = (): string => `sim_batch_${randomBase62(16)}`;
export const JOB_ID = /^sim_batch_[0-9A-Za-z]{16}$/;

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
  /** Delivery attempts so far (a crashed worker's job is redelivered). */
  attempts: number;
  progress: { rows_done: number; rows_total: number };
  /** Set when completed. */
  artifact: { file: string; row_count: number; content_length_bytes: number } | null;
  /** Set when failed: a message safe to show. */
  error: { code: string; message: string } | null;
};

/** Attempts (deliveries) before a job whose worker keeps dying is failed. */
export const MAX_JOB_DELIVERIES = 3;
