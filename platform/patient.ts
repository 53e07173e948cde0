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

/** Errors no wait mends: a request NATS refuses this user, a connection closed for good. */
const FINAL = new Set(['PermissionViolationError', 'ClosedConnectionError', 'DrainingConnectionError']);
/**
 * JetStream API answers of a cluster between leaders (nats-server's JSClusterNotLeaderErr "JetStream
 * cluster can not handle request", JSStreamOfflineErr "stream is offline"): 500s that a wait mends.
 */
const BETWEEN_LEADERS = new Set([10009, 10118]);

const nameOf = (e: unknown): string => (e as Error | null)?.name ?? '';

/** Not answering, or answering that it cannot yet: a leader being elected, peers not yet known. */
export function isNotReady(err: unknown): boolean {
  const cause = (err as Error | null)?.cause;
  if (FINAL.has(nameOf(err)) || FINAL.has(nameOf(cause))) return false;
  if (isNatsTransient(err) || isNatsTransient(cause)) return true;
  if (err instanceof JetStreamApiError && (err.status === 503 || BETWEEN_LEADERS.has(err.code))) return true;
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
      if (!retryable(err) || Date.now() >= deadline) throw named(what, err);
      await sleepBackoff(attempt, { baseMs: 250, maxMs: 2_000 });
    }
  }
}

/** `err` with what was being done in front of its message; its name kept (`toApiError` reads it). */
function named(what: string, err: unknown): Error {
  const out = new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  if (err instanceof Error) out.name = err.name;
  return out;
}
