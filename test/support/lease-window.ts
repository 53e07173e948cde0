/**
 * The rate limiter's own per-minute window, read where the product keeps it: every state a
 * gateway writes to the shared `leases` KV bucket for one key (`{"at": ms, "w": [ages]}`: the
 * admissions still in the window, as ms before `at`). Tests check the product's window and its
 * admission times, instead of a window they compute from their own clocks.
 */
import { Kvm } from '@nats-io/kv';
import { expect } from 'vitest';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { stateKey } from '../../gateways/core/rate-limit/leased-rate-limiter.ts';
import type { Nats } from '../../platform/nats.ts';

/** One written state: its time and the admission times in its window, oldest first. */
export type WindowState = { at: number; window: number[] };

export type WindowWatch = { states: WindowState[]; stop(): Promise<void> };

/** Records every state written for `keyId` on Basic from now on. */
export async function watchBasicWindow(nats: Nats, keyId: string): Promise<WindowWatch> {
  const kv = await new Kvm(nats.js).open(KV_BUCKETS.leases);
  const states: WindowState[] = [];
  const iter = await kv.watch({ key: stateKey(keyId, 'basic') });
  const done = (async () => {
    for await (const e of iter) {
      if (e.operation !== 'PUT') continue;
      const wire = JSON.parse(e.string()) as { at: number; w?: number[] };
      states.push({ at: wire.at, window: (wire.w ?? []).map((age) => wire.at - age).sort((a, b) => a - b) });
    }
  })();
  return {
    states,
    async stop() {
      iter.stop();
      await done;
    },
  };
}

/**
 * Every admission the product recorded: the union of the windows written (an admission stays in
 * every window written within 60 s after it; equal times count as often as one window holds them).
 */
export function recordedAdmissions(states: readonly WindowState[]): number[] {
  const most = new Map<number, number>();
  for (const s of states) {
    const here = new Map<number, number>();
    for (const t of s.window) here.set(t, (here.get(t) ?? 0) + 1);
    for (const [t, n] of here) most.set(t, Math.max(most.get(t) ?? 0, n));
  }
  return [...most].flatMap(([t, n]) => Array.from({ length: n }, () => t)).sort((a, b) => a - b);
}

/**
 * The product's window is the spec's: every state written holds at most `limit` admissions, and
 * exactly the recorded admissions of the `windowMs` up to its time (none dropped, none stale).
 */
export function expectExactWindows(states: readonly WindowState[], limit: number, windowMs: number): void {
  states.forEach((s, i) => {
    expect(s.window.length, `window at ${s.at}`).toBeLessThanOrEqual(limit);
    // The admissions recorded by this write (states are in write order): a later write in the same
    // millisecond may add one at this very time, which this state cannot hold yet.
    const known = recordedAdmissions(states.slice(0, i + 1));
    const expected = known.filter((t) => t >= s.at - windowMs && t <= s.at).slice(-limit);
    expect(s.window, `window at ${s.at}`).toEqual(expected);
  });
}

/**
 * The recorded admission times can be the ones the clients saw: by any time t, no more admissions
 * were recorded than requests had been sent, nor fewer than admitted answers had come back.
 */
export function expectWithinSpans(recorded: readonly number[], sentMs: number[], doneMs: number[]): void {
  const sent = [...sentMs].sort((a, b) => a - b);
  const done = [...doneMs].sort((a, b) => a - b);
  const upTo = (xs: number[], t: number) => xs.filter((x) => x <= t).length;
  for (const t of [...recorded, ...done]) {
    const n = upTo(recorded as number[], t);
    expect(n, `admissions recorded by ${t}`).toBeLessThanOrEqual(upTo(sent, t));
    expect(n, `admissions recorded by ${t}`).toBeGreaterThanOrEqual(upTo(done, t));
  }
}
