/**
 * The login lockout: after consecutive failures per subject (an email, an address), the first
 * `freeFailures` cost nothing, then each further failure locks the subject for
 * `baseMs · 2^(n − freeFailures − 1)`, capped at `maxMs`. A success clears the subject. Invariant:
 * at most `maxSubjects` subjects are tracked (LRU), and a subject is forgotten once its lock and a
 * quiet `forgetAfterMs` have passed, so memory stays flat.
 */
import { backoffMs } from '../../platform/backoff.ts';
import { LruCache } from '../core/lru-cache.ts';

export type LockoutSpec = {
  /** Failures allowed before the first lock. */
  freeFailures: number;
  /** First lock, ms. */
  baseMs: number;
  /** Longest lock, ms. */
  maxMs: number;
  /** Failures are forgotten after this long without a new one, ms. */
  forgetAfterMs: number;
};

type State = { failures: number; lockedUntil: number };

export class FailureLockout {
  private readonly subjects: LruCache<string, State>;

  constructor(
    readonly spec: LockoutSpec,
    maxSubjects = 100_000,
    private readonly now: () => number = Date.now,
  ) {
    this.subjects = new LruCache(maxSubjects, spec.forgetAfterMs, now);
  }

  /** Ms the subject must still wait (0: free to try). */
  waitMs(subject: string): number {
    const s = this.subjects.get(subject);
    return s ? Math.max(0, s.lockedUntil - this.now()) : 0;
  }

  /** Records a failure; returns the lock it starts, ms (0 while within the free failures). */
  fail(subject: string): number {
    const s = this.subjects.get(subject) ?? { failures: 0, lockedUntil: 0 };
    const failures = s.failures + 1;
    const over = failures - this.spec.freeFailures;
    const lockMs = over > 0 ? backoffMs(over - 1, this.spec) : 0;
    const lockedUntil = lockMs > 0 ? this.now() + lockMs : s.lockedUntil;
    this.subjects.set(subject, { failures, lockedUntil }, lockMs + this.spec.forgetAfterMs);
    return lockMs;
  }

  succeed(subject: string): void {
    this.subjects.delete(subject);
  }

  get size(): number {
    return this.subjects.size;
  }
}
