/**
 * Who produces a live synthetic session (symbol, seed) when several processes serve it: a lease
 * in the `sim_sessions` KV bucket, taken and renewed by compare-and-swap. The owner renews every
 * tick; any process with clients extends `interest_until`; an expired lease is taken over (the new
 * owner continues the same run from `start_ms`, and message ids make any overlap store once).
 */
import type { KV } from '@nats-io/kv';
import { decode, encode } from '../../../platform/msgpack.ts';

export type LeaseValue = { owner: string; until: number; start_ms: number; interest_until: number };

export type LeaseOutcome =
  | { role: 'owner'; startMs: number; interestUntil: number }
  | { role: 'follower'; startMs: number }
  | { role: 'none' };

export const LEASE_MS = 3_000;
export const INTEREST_MS = 10_000;

/** One step of the protocol for `me`; conflicts return the state as last read (retried next tick). */
export async function leaseStep(
  kv: KV,
  key: string,
  me: string,
  hasClients: boolean,
  now = Date.now(),
): Promise<LeaseOutcome> {
  const entry = await kv.get(key);
  const current =
    entry && entry.operation === 'PUT' && entry.value.length > 0 ? decode<LeaseValue>(entry.value) : null;
  const interest = hasClients ? now + INTEREST_MS : (current?.interest_until ?? 0);
  try {
    if (!current) {
      if (!hasClients) return { role: 'none' };
      const v: LeaseValue = { owner: me, until: now + LEASE_MS, start_ms: now, interest_until: interest };
      if (entry) await kv.update(key, encode(v), entry.revision);
      else await kv.create(key, encode(v));
      return { role: 'owner', startMs: v.start_ms, interestUntil: v.interest_until };
    }
    const revision = (entry as { revision: number }).revision;
    if (current.owner === me || current.until < now) {
      if (current.owner !== me && !hasClients) return { role: 'none' };
      const v: LeaseValue = {
        owner: me,
        until: now + LEASE_MS,
        start_ms: current.start_ms,
        interest_until: Math.max(interest, current.interest_until),
      };
      await kv.update(key, encode(v), revision);
      return { role: 'owner', startMs: v.start_ms, interestUntil: v.interest_until };
    }
    if (hasClients && current.interest_until < now + INTEREST_MS / 2) {
      await kv.update(key, encode({ ...current, interest_until: interest }), revision);
    }
    return { role: 'follower', startMs: current.start_ms };
  } catch {
    return current
      ? ({
          role: current.owner === me ? 'owner' : 'follower',
          startMs: current.start_ms,
          interestUntil: current.interest_until,
        } as LeaseOutcome)
      : { role: 'none' };
  }
}

/** Ends the session (owner only, no interest left). */
export async function releaseLease(kv: KV, key: string, me: string): Promise<void> {
  const entry = await kv.get(key);
  if (entry?.operation !== 'PUT' || entry.value.length === 0) return;
  if (decode<LeaseValue>(entry.value).owner !== me) return;
  await kv.delete(key, { previousSeq: entry.revision }).catch(() => {});
}
