/**
 * An account's quota ledger, pure: which of its jobs are queued or running, and how many artifact
 * bytes it keeps. Invariant: the ledger never counts less than the account really holds.
 * - A job enters `active` when admitted, before its record exists, and leaves it only once its
 *   record says completed (its bytes move to `stored`) or failed, or when no record appeared
 *   within `RESERVATION_GRACE_MS` (the gateway died between admitting and queueing it).
 * - Stored bytes are grouped into at most ~66 time slots (width ≥ retention / 64), each counting
 *   until the sweep has removed every file in it: late by at most one slot, never early.
 */
import { ApiError } from '../../../contracts/errors.ts';
import type { AccountJobLedger, JobRecord } from '../../../contracts/jobs.ts';

/** A job admitted this long ago with no record is taken as never queued, ms. */
export const RESERVATION_GRACE_MS = 60_000;
/** Retry-After when the account has too many jobs queued or running, seconds. */
export const ACTIVE_RETRY_AFTER_S = 5;

export type QuotaLimits = { maxActiveJobs: number; maxStoredBytes: number; retentionMs: number };

export const emptyLedger = (): AccountJobLedger => ({ active: {}, stored: [] });

/** Until when a file finished at `finishedAt` counts: the end of its slot plus the retention. */
export function countsUntil(finishedAt: number, retentionMs: number): number {
  const width = Math.max(60_000, Math.ceil(retentionMs / 64));
  return Math.floor(finishedAt / width) * width + width + retentionMs;
}

/** The ledger brought up to date with the records of its active jobs (`null`: no record). */
export function reconcile(
  ledger: AccountJobLedger,
  records: ReadonlyMap<string, JobRecord | null>,
  limits: QuotaLimits,
  now: number,
): AccountJobLedger {
  const active: Record<string, number> = {};
  const stored = new Map<number, number>(ledger.stored.filter(([until]) => until > now));
  for (const [jobId, admittedAt] of Object.entries(ledger.active)) {
    const r = records.get(jobId) ?? null;
    if (r?.status === 'completed' && r.artifact) {
      const until = countsUntil(r.finished_at ?? now, limits.retentionMs);
      if (until > now) stored.set(until, (stored.get(until) ?? 0) + r.artifact.content_length_bytes);
    } else if (r?.status === 'queued' || r?.status === 'running') active[jobId] = admittedAt;
    else if (!r && now - admittedAt < RESERVATION_GRACE_MS) active[jobId] = admittedAt;
  }
  return { active, stored: [...stored].sort((a, b) => a[0] - b[0]) };
}

export const storedBytes = (ledger: AccountJobLedger): number =>
  ledger.stored.reduce((sum, [, bytes]) => sum + bytes, 0);

/** Throws 429 `quota_exceeded` (with Retry-After) when the account may not start one more job. */
export function checkQuota(ledger: AccountJobLedger, limits: QuotaLimits, now: number): void {
  const active = Object.keys(ledger.active).length;
  if (active >= limits.maxActiveJobs) {
    const err = new ApiError(
      'quota_exceeded',
      `this account has ${active} generation jobs queued or running; at most ${limits.maxActiveJobs} at once: retry when one has finished`,
    );
    err.retryAfterSeconds = ACTIVE_RETRY_AFTER_S;
    throw err;
  }
  const bytes = storedBytes(ledger);
  if (bytes >= limits.maxStoredBytes) {
    const oldest = ledger.stored[0]?.[0] ?? now;
    const days = Math.round((limits.retentionMs / 86_400_000) * 10) / 10;
    const err = new ApiError(
      'quota_exceeded',
      `this account stores ${bytes} bytes of artifacts; at most ${limits.maxStoredBytes}: artifacts are deleted ${days} days after they were made`,
    );
    err.retryAfterSeconds = Math.max(1, Math.ceil((oldest - now) / 1_000));
    throw err;
  }
}
