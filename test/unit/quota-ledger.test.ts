/** The quota ledger's rules, pure: what stays active, what moves to stored, when bytes stop counting. */
import { describe, expect, it } from 'vitest';
import type { JobRecord } from '../../contracts/jobs.ts';
import {
  checkQuota,
  countsUntil,
  RESERVATION_GRACE_MS,
  reconcile,
  storedBytes,
} from '../../gateways/http/generation/quota-ledger.ts';

const HOUR = 3_600_000;
const limits = { maxActiveJobs: 2, maxStoredBytes: 1_000, retentionMs: 7 * 24 * HOUR };
const NOW = Date.UTC(2030, 0, 1);

const record = (status: JobRecord['status'], bytes = 0, finishedAt = NOW): JobRecord => ({
  job_id: 'x',
  account_id: 'acc',
  status,
  manifest_hash: 'sha256:0',
  duration_seconds: 60,
  symbol: 'BTC',
  created_at: NOW,
  started_at: null,
  finished_at: status === 'completed' || status === 'failed' ? finishedAt : null,
  attempts: 1,
  progress: { rows_done: 0, rows_total: 0 },
  artifact: status === 'completed' ? { file: 'x.parquet', row_count: 1, content_length_bytes: bytes } : null,
  error: null,
});

describe('reconcile', () => {
  it('keeps queued and running jobs, moves completed ones to stored, drops failed ones', () => {
    const ledger = { active: { q: NOW, r: NOW, c: NOW, f: NOW }, stored: [] as [number, number][] };
    const records = new Map([
      ['q', record('queued')],
      ['r', record('running')],
      ['c', record('completed', 300)],
      ['f', record('failed')],
    ]);
    const next = reconcile(ledger, records, limits, NOW);
    expect(Object.keys(next.active).sort()).toEqual(['q', 'r']);
    expect(storedBytes(next)).toBe(300);
  });

  it('keeps a job without a record only within the grace period', () => {
    const ledger = { active: { young: NOW - 1_000, old: NOW - RESERVATION_GRACE_MS }, stored: [] };
    const next = reconcile(ledger, new Map(), limits, NOW);
    expect(Object.keys(next.active)).toEqual(['young']);
  });

  it('counts stored bytes until the retention has passed for their whole slot, never less', () => {
    const until = countsUntil(NOW, limits.retentionMs);
    expect(until).toBeGreaterThanOrEqual(NOW + limits.retentionMs);
    expect(until - (NOW + limits.retentionMs)).toBeLessThanOrEqual(limits.retentionMs / 64 + 1);
    const ledger = { active: {}, stored: [[until, 500]] as [number, number][] };
    expect(storedBytes(reconcile(ledger, new Map(), limits, until - 1))).toBe(500);
    expect(storedBytes(reconcile(ledger, new Map(), limits, until))).toBe(0);
  });
});

describe('checkQuota', () => {
  it('refuses at the active-jobs quota and at the stored-bytes quota, with Retry-After', () => {
    const full = { active: { a: NOW, b: NOW }, stored: [] as [number, number][] };
    expect(() => checkQuota(full, limits, NOW)).toThrow(/at most 2 at once/);
    const stored = { active: {}, stored: [[NOW + HOUR, 1_000]] as [number, number][] };
    try {
      checkQuota(stored, limits, NOW);
      expect.unreachable();
    } catch (err) {
      expect((err as { code: string }).code).toBe('quota_exceeded');
      expect((err as { retryAfterSeconds: number }).retryAfterSeconds).toBe(3_600);
    }
    expect(() => checkQuota({ active: { a: NOW }, stored: [[NOW + HOUR, 999]] }, limits, NOW)).not.toThrow();
  });
});
