/**
 * Anonymous errors (no recognised key) sampled per client address before they reach the error log:
 * each address has at most ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE of its errors stored per
 * minute, the rest only counted (`mdp_error_log_anonymous_total{stored="false"}`), so one noisy
 * address spends its own allowance and never another address's first error. The addresses are held
 * in a bounded LRU (ANONYMOUS_ERROR_ADDRESSES, each for a minute): memory is flat however many
 * addresses there are. Behind it the error log keeps its per-process cap (error-log.ts), the bound
 * on what any number of addresses together can store. Errors of an account pass untouched.
 */
import {
  ANONYMOUS_ERROR_ADDRESSES,
  ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE,
} from '../../contracts/base-url-limits.ts';
import type { ErrorRecorder } from '../../contracts/status.ts';
import { anonymousErrors } from '../../platform/metrics.ts';
import { LruCache } from './lru-cache.ts';

const MINUTE_MS = 60_000;

/** `recorder`, with anonymous errors sampled per address (no address: one shared allowance). */
export function sampledPerAddress(
  recorder: ErrorRecorder,
  perMinute = ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE,
  now: () => number = Date.now,
): ErrorRecorder {
  const windows = new LruCache<string, { minute: number; taken: number }>(
    ANONYMOUS_ERROR_ADDRESSES,
    MINUTE_MS,
    now,
  );
  return {
    record(entry, from) {
      if (entry.account_id === null) {
        const address = from ?? '';
        const minute = Math.floor(now() / MINUTE_MS);
        let w = windows.get(address);
        if (!w || w.minute !== minute) {
          w = { minute, taken: 0 };
          windows.set(address, w);
        }
        if (w.taken++ >= perMinute) {
          anonymousErrors.inc({ stored: 'false' });
          return;
        }
      }
      recorder.record(entry, from);
    },
  };
}
