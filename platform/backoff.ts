/**
 * Exponential backoff between retries, written once: `base · 2^attempt`, capped. Attempt 0 is
 * the first retry. No jitter: the retries here are of one process against its own NATS server
 * (a reconnect, a publish, a consumer reopened), not a crowd of clients against one endpoint.
 */
export function backoffMs(attempt: number, opts: { baseMs?: number; maxMs: number }): number {
  const base = opts.baseMs ?? 50;
  return Math.min(opts.maxMs, base * 2 ** Math.min(attempt, 30));
}

/** Waits the backoff of `attempt`. */
export function sleepBackoff(attempt: number, opts: { baseMs?: number; maxMs: number }): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, opts)));
}
