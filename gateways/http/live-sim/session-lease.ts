/**
 * Who produces a live synthetic session (symbol, seed) when several processes serve it: a lease per
 * session in the `sim_sessions` KV bucket, changed by compare-and-set (`platform/kv-lease.ts`, which
 * states how leases expire and why two writers cannot both win). The owner renews every tick; any
 * process with clients extends `interest_until`; an expired lease is taken over (the new owner
 * continues the same run from `start_ms`, and message ids make any overlap store once).
 */
import type { LeaseBucket } from '../../../platform/kv-lease.ts';
import { REMOVE } from '../../../platform/kv-lease.ts';

export type LeaseValue = { owner: string; until: number; start_ms: number; interest_until: number };

export type LeaseOutcome =
  | { role: 'owner'; startMs: number; interestUntil: number }
  | { role: 'follower'; startMs: number }
  | { role: 'none' };

export const LEASE_MS = 3_000;
export const INTEREST_MS = 10_000;

/** The next lease value for `me`, or null to write nothing. */
function next(current: LeaseValue | null, me: string, hasClients: boolean, now: number): LeaseValue | null {
  const interest = hasClients ? now + INTEREST_MS : (current?.interest_until ?? 0);
  if (!current)
    return hasClients ? { owner: me, until: now + LEASE_MS, start_ms: now, interest_until: interest } : null;
  if (current.owner === me || current.until < now) {
    if (current.owner !== me && !hasClients) return null;
    return {
      owner: me,
      until: now + LEASE_MS,
      start_ms: current.start_ms,
      interest_until: Math.max(interest, current.interest_until),
    };
  }
  if (hasClients && current.interest_until < now + INTEREST_MS / 2)
    return { ...current, interest_until: interest };
  return null;
}

function outcomeOf(v: LeaseValue | null, me: string): LeaseOutcome {
  if (!v) return { role: 'none' };
  return v.owner === me
    ? { role: 'owner', startMs: v.start_ms, interestUntil: v.interest_until }
    : { role: 'follower', startMs: v.start_ms };
}

/**
 * One step of the protocol for `me`. A write that fails (a lost race, NATS slow or gone) returns the
 * state as last read, so an owner keeps producing through a transient error (retried next tick); a
 * read that fails throws (the caller counts it as no lease).
 */
export async function leaseStep(
  bucket: LeaseBucket,
  key: string,
  me: string,
  hasClients: boolean,
): Promise<LeaseOutcome> {
  let seen: { value: LeaseValue | null } | null = null;
  try {
    const r = await bucket.change<LeaseValue>(
      key,
      (cur, now) => {
        seen = { value: cur };
        return next(cur, me, hasClients, now);
      },
      { attempts: 1 },
    );
    return outcomeOf(r.wrote ? r.value : r.current, me);
  } catch (err) {
    if (seen === null) throw err;
    return outcomeOf((seen as { value: LeaseValue | null }).value, me);
  }
}

/** Ends the session (owner only, no interest left). */
export async function releaseLease(bucket: LeaseBucket, key: string, me: string): Promise<void> {
  await bucket
    .change<LeaseValue>(key, (cur) => (cur?.owner === me ? REMOVE : null), { attempts: 1 })
    .catch(() => {});
}
