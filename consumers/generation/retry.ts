/**
 * Retries of a failing window: up to `maxRetries` more attempts, waiting before retry n
 * (n = 1, 2, ...) `backoffSeconds · 2^(n−1)`, capped at 60 s: exponential, so a transient fault
 * (disk pressure, a crashed worker) gets room to clear without stalling a job for long.
 */

import { backoffMs as platformBackoffMs } from '../../platform/backoff.ts';

/** Longest wait between two attempts, ms. */
export const MAX_BACKOFF_MS = 60_000;

/** How often and how patiently to retry. */
export type RetryPolicy = { readonly maxRetries: number; readonly backoffSeconds: number };

/** Wait before retry `retry` (1-based), ms: the platform's backoff (platform/backoff.ts) from the policy's base. */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  return platformBackoffMs(retry - 1, { baseMs: policy.backoffSeconds * 1000, maxMs: MAX_BACKOFF_MS });
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The last error of an operation that failed on every attempt. */
export class RetriesExhaustedError extends Error {
  override name = 'RetriesExhaustedError';
  constructor(
    message: string,
    readonly attempts: number,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Runs `operation(attempt)` until it succeeds or `maxRetries` retries have failed, then throws
 * `RetriesExhaustedError` whose cause is the last error. An abort stops it at once.
 */
export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    signal?.throwIfAborted();
    try {
      return await operation(attempt);
    } catch (error) {
      signal?.throwIfAborted();
      if (attempt >= policy.maxRetries) {
        const reason = error instanceof Error ? error.message : String(error);
        throw new RetriesExhaustedError(reason, attempt + 1, { cause: error });
      }
      await sleep(backoffMs(policy, attempt + 1), signal);
    }
  }
}
