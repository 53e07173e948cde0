/**
 * Exponential backoff between retries, written once: `base · 2^attempt`, capped. Attempt 0 is
 * the first retry. Without jitter for one process retrying against its own NATS server (a
 * reconnect, a publish, a consumer reopened); with jitter (a wait drawn in [½, 1] of it) where
 * many processes retry against one remote endpoint at once (the venue connectors), so that they
 * do not come back in step.
 */
export type BackoffOptions = { baseMs?: number; maxMs: number };

export function backoffMs(attempt: number, opts: BackoffOptions): number {
  const base = opts.baseMs ?? 50;
  return Math.min(opts.maxMs, base * 2 ** Math.min(attempt, 30));
}

/**
 * A wait drawn uniformly in [0, backoff of `attempt`) ("full jitter"): for many writers racing on
 * one record, so that the losers of a round do not come back together.
 */
export function fullJitterMs(
  attempt: number,
  opts: BackoffOptions,
  random: () => number = Math.random,
): number {
  return random() * backoffMs(attempt, opts);
}

/** Waits the backoff of `attempt`. */
export function sleepBackoff(attempt: number, opts: BackoffOptions): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, opts)));
}

/**
 * The retries of one thing that fails and recovers (a venue connection, a snapshot fetch):
 * `next()` is the wait before the next attempt (the first `immediate` retries at once, then the
 * backoff of each further one, jittered when asked), `reset()` after a success.
 */
export class RetryBackoff {
  private failures = 0;

  constructor(
    private readonly opts: BackoffOptions & { immediate?: number; jitter?: boolean },
    private readonly random: () => number = Math.random,
  ) {}

  next(): number {
    const over = ++this.failures - (this.opts.immediate ?? 0);
    if (over <= 0) return 0;
    const ms = backoffMs(over - 1, this.opts);
    return this.opts.jitter ? Math.round(ms * (0.5 + this.random() / 2)) : ms;
  }

  reset(): void {
    this.failures = 0;
  }
}
