/**
 * A remote answer that may not come: `ask`'s value, or `null` when it fails or takes longer than
 * `ms` (the timer holds no process open). For reads across a slow or cut link (another region's
 * NATS) where "no answer" is itself the answer.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export function inTime<T>(ask: Promise<T>, ms: number): Promise<T | null> {
  return Promise.race([ask.catch(() => null), sleep(ms, null, { ref: false })]);
}
