/**
 * Every call of a POST /mcp batch counts against the key's rate limit. The guard admitted the
 * request once: that token pays for the first item. Each further item, in order, is admitted
 * again by the same guard (so the same shared limiter, across gateway processes) and takes one
 * more token. The first refusal stops the charging: that item and every later one are answered
 * with the refusal (-32000 with `retry_after` for the rate limit), never run. So a batch never runs
 * more calls than the key had tokens, and a refused item costs what a refused request costs.
 */
import { ApiError } from '../../contracts/errors.ts';
import { RateLimitedError } from './guard.ts';

/** Admits one more call of the same request, or throws the guard's refusal. */
export type AdmitAgain = () => Promise<void>;

/** How many leading items may run, and what the others are answered with. */
export type BatchCharge = { admitted: number; refusal: ApiError | null };

export async function chargeBatch(items: number, admitAgain: AdmitAgain): Promise<BatchCharge> {
  for (let i = 1; i < items; i++) {
    try {
      await admitAgain();
    } catch (err) {
      return { admitted: i, refusal: asCallError(err, i, items) };
    }
  }
  return { admitted: items, refusal: null };
}

/** The guard's refusal as the error of one call: a rate limit carries `retry_after` (spec -32000). */
function asCallError(err: unknown, index: number, items: number): ApiError {
  if (err instanceof RateLimitedError) {
    const seconds = Math.max(1, Math.ceil(err.decision.retryAfterSeconds));
    return new ApiError(
      'rate_limited',
      `rate limit exceeded at call ${index + 1} of a batch of ${items} (each call takes a token); retry in ${seconds} s`,
      { retry_after: seconds },
    );
  }
  return err instanceof ApiError ? err : new ApiError('internal', undefined, undefined, { cause: err });
}
