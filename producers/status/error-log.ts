/**
 * The error log writer: one message per error response on `errlog.<account>.<request id>` (stream
 * `ERRORS`, kept 30 days). Fire and forget, never in a response's way: at most MAX_PENDING
 * publishes in flight per process; beyond, entries are dropped and the drop is logged (a flood of
 * errors must not grow memory).
 */
import { type ErrorRecorder, errorLogSubject } from '../../contracts/status.ts';
import { encode } from '../../platform/codec.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';

const MAX_PENDING = 1_000;

export function createErrorLog(nats: Nats, log: Logger, maxPending = MAX_PENDING): ErrorRecorder {
  let pending = 0;
  let dropped = 0;
  return {
    record(entry) {
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
