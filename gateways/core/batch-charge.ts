/**
 * Every call of a JSON-RPC batch (POST /mcp, the JSON-RPC edge) counts against the key's rate
 * limit. The guard admitted the request once: that token pays for the first item. Each further
 * item, in order, takes one more token of the same key (`Principal.charge`: the same shared
 * limiter, across gateway processes, without looking the key up again). The first refusal stops
 * the charging: that item and every later one are answered with the refusal (-32000 with
 * `retry_after` for the rate limit), never run. So a batch never runs more calls than the key had
 * tokens, and a refused item costs what a refused request costs.
 */
import { ApiError } from '../../contracts/errors.ts';
import { type Principal, type RateDecision, RateLimitedError } from './guard.ts';

/**
 * How many leading items may run, what the others are answered with, and the bucket's state after
 * the last token taken (for the X-RateLimit-* headers; null when none was taken or the guard has none).
 */
export type BatchCharge = { admitted: number; refusal: ApiError | null; decision: RateDecision | null };

export async function chargeBatch(
  items: number,
  principal: Pick<Principal, 'charge' | 'chargeNow'>,
): Promise<BatchCharge> {
  let decision: RateDecision | null = null;
  let i = 1;
  while (i < items) {
    // As many as the process holds at once; the store is asked only when they run out.
    const held = principal.chargeNow?.(items - i);
    if (held && held.taken > 0) {
      i += held.taken;
      decision = held.decision;
      continue;
    }
    try {
      decision = await principal.charge();
    } catch (err) {
      return { admitted: i, refusal: asCallError(err, i, items), decision };
    }
    i++;
  }
  return { admitted: items, refusal: null, decision };
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
