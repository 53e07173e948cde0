/**
 * The spec's reconnection rule (Events §3): wait the SSE `retry` value (else 1 s), with
 * exponential backoff and jitter per consecutive failure. Failure n waits
 * `min(max, retry · 2^(n−1))` stretched by a random factor in [1, 1.5), so clients cut at the same
 * moment do not all come back at once; a server's `Retry-After` is a floor.
 */

/** The spec's wait when the server sent no `retry:` field. */
export const DEFAULT_RETRY_MS = 1_000;
/** Longest wait between attempts. */
export const DEFAULT_MAX_DELAY_MS = 30_000;

export function reconnectDelay(
  retryMs: number,
  consecutiveFailures: number,
  opts: { maxDelayMs?: number; retryAfterMs?: number; random?: () => number } = {},
): number {
  const max = opts.maxDelayMs ?? DEFAULT_MAX_DELAY_MS;
  const exponent = Math.max(0, consecutiveFailures - 1);
  const base = Math.min(max, retryMs * 2 ** Math.min(exponent, 30));
  const jittered = Math.min(max, base * (1 + (opts.random ?? Math.random)() / 2));
  return Math.round(Math.max(jittered, opts.retryAfterMs ?? 0));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
