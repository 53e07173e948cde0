/**
 * Callers waiting until a projection has applied the event at a stream sequence (a command that
 * answers once its own event is readable). Each wait has a deadline that rejects with the
 * projection's "update pending" error; `advance` settles every wait up to the applied sequence.
 */
import { ApiError, type ErrorCode } from '../contracts/errors.ts';

type Waiter = { seq: number; resolve: () => void; reject: (e: Error) => void; timer?: NodeJS.Timeout };

export class AppliedWaiters {
  private applied = 0;
  private readonly waiters = new Set<Waiter>();

  constructor(private readonly pendingCode: ErrorCode) {}

  /** The last sequence applied. */
  get position(): number {
    return this.applied;
  }

  /** Resolves once `seq` is applied; rejects with `pendingCode` after `deadlineMs` (none if infinite). */
  wait(seq: number, deadlineMs = Infinity): Promise<void> {
    if (seq <= this.applied) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w: Waiter = { seq, resolve, reject };
      if (Number.isFinite(deadlineMs))
        w.timer = setTimeout(
          () => {
            this.waiters.delete(w);
            reject(new ApiError(this.pendingCode));
          },
          Math.min(deadlineMs, 2 ** 31 - 1),
        );
      this.waiters.add(w);
    });
  }

  /** `seq` is applied: every wait up to it resolves, except a wait on `seq` itself when `failed` says why. */
  advance(seq: number, failed?: Error): void {
    this.applied = seq;
    for (const w of [...this.waiters]) {
      if (w.seq > seq) continue;
      this.waiters.delete(w);
      clearTimeout(w.timer);
      if (failed && w.seq === seq) w.reject(failed);
      else w.resolve();
    }
  }

  /** Rejects every wait with `err` (the projection stopped). */
  rejectAll(err: Error): void {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiters.clear();
  }
}
