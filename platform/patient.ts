/**
 * Start-up administration on a cluster that may still be forming: a stream, bucket, object store or
 * durable consumer created or opened by several processes starting at once, while the cluster
 * elects its leaders, can outlast one request's timeout. A process that gave up there died at start
 * with a bare `fatal: timeout` (KV buckets in the fault suite and the soak; a worker's start in
 * fresh-clone CI). `patiently` retries such a request while NATS is not answering, with growing
 * waits, for up to PATIENCE_MS; its last error names what was being done. Only for requests that
 * are safe to repeat (a create of what may exist already, with the same configuration).
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import { isNatsTransient } from '../contracts/errors.ts';
import { sleepBackoff } from './backoff.ts';

/** How long start-up administration waits for a cluster to answer, ms. */
export const PATIENCE_MS = 60_000;

/** Not answering, or answering that it cannot yet: a leader being elected, peers not yet known. */
export function isNotReady(err: unknown): boolean {
  if (isNatsTransient(err) || isNatsTransient((err as Error | null)?.cause)) return true;
  if (err instanceof JetStreamApiError && err.status === 503) return true;
  return /no suitable peers|temporarily unavailable/i.test(String(err));
}

export async function patiently<T>(
  what: string,
  request: () => Promise<T>,
  opts: { withinMs?: number; retryable?: (err: unknown) => boolean } = {},
): Promise<T> {
  const deadline = Date.now() + (opts.withinMs ?? PATIENCE_MS);
  const retryable = opts.retryable ?? isNotReady;
  for (let attempt = 0; ; attempt++) {
    try {
      return await request();
    } catch (err) {
      if (!retryable(err) || Date.now() >= deadline)
        throw new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      await sleepBackoff(attempt, { baseMs: 250, maxMs: 2_000 });
    }
  }
}
