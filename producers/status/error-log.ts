/**
 * The error log writer: one message per error response on `errlog.<account>.<request id>` (stream
 * `ERRORS`, kept 30 days). Fire and forget, never in a response's way: at most MAX_PENDING
 * publishes in flight per process; beyond, entries are dropped and the drop is logged (a flood of
 * errors must not grow memory). Errors with no account (no or unknown key) are anyone's to cause:
 * at most ANONYMOUS_ERRORS_STORED_PER_MINUTE of them are stored per process per minute, the rest
 * only counted (`mdp_error_log_anonymous_total{stored="false"}`), so a flood of anonymous requests
 * is neither JetStream work nor a flood of the shared log.
 */
import { ANONYMOUS_ERRORS_STORED_PER_MINUTE } from '../../contracts/base-url-limits.ts';
import { type ErrorRecorder, errorLogSubject } from '../../contracts/status.ts';
import type { Logger } from '../../platform/logger.ts';
import { anonymousErrors } from '../../platform/metrics.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

const MAX_PENDING = 1_000;
const MINUTE_MS = 60_000;

/** A fixed one-minute window: true for the first `perMinute` calls of each minute. */
function minuteSample(perMinute: number, now: () => number): () => boolean {
  let minute = -1;
  let taken = 0;
  return () => {
    const m = Math.floor(now() / MINUTE_MS);
    if (m !== minute) {
      minute = m;
      taken = 0;
    }
    return taken++ < perMinute;
  };
}

export function createErrorLog(
  nats: Nats,
  log: Logger,
  maxPending = MAX_PENDING,
  anonymousPerMinute = ANONYMOUS_ERRORS_STORED_PER_MINUTE,
): ErrorRecorder {
  let pending = 0;
  let dropped = 0;
  const sampleAnonymous = minuteSample(anonymousPerMinute, Date.now);
  return {
    record(entry) {
      if (entry.account_id === null) {
        const stored = sampleAnonymous();
        anonymousErrors.inc({ stored: String(stored) });
        if (!stored) return;
      }
      if (pending >= maxPending) {
        if (dropped++ % 1_000 === 0) log.warn({ dropped }, 'error log: too many entries in flight; dropping');
        return;
      }
      pending++;
      nats.js
        .publish(errorLogSubject(entry.account_id, entry.request_id), encode(entry))
        .catch((err) =>
          log.warn({ err: String(err), request_id: entry.request_id }, 'error log entry not stored'),
        )
        .finally(() => pending--);
    },
  };
}
