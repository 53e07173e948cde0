/**
 * Failed API-key attempts per client address, at the edge guard: a token bucket per address
 * (`KEY_FAILURES_PER_ADDRESS`, 30 at once then 30 per minute) that only failures spend. A failure
 * is a presented credential that is no key: malformed, unknown, or a session token. Once an
 * address has spent its bucket, its further failures are answered 429 (with Retry-After) instead
 * of 401.
 *
 * What it never does (issue 27):
 * - refuse a valid key. The bucket is consulted only after the key has been found wanting, so a
 *   valid key from an address that also sends bad ones (a NAT, a shared office, a balancer not yet
 *   trusted) is admitted as if the bucket were full. The price: a well-formed key from a spent
 *   address is still looked up. That costs the key store one KV read per distinct unknown key
 *   (repeats are answered by its negative cache); refusing lookups instead would lock out every
 *   valid key the process has not cached yet, which is the failure this file exists to avoid.
 * - count a request with no credential at all: that is a 401 and spends nothing, so a keyless
 *   health probe or a browser's first try cannot use up a neighbour's budget.
 * LRU-bounded (`LIMITER_MAX_SUBJECTS` addresses) and per process; a request without a known address
 * is never limited here.
 */
import { KEY_FAILURES_PER_ADDRESS, LIMITER_MAX_SUBJECTS } from '../../contracts/console-limits.ts';
import { retryAfterSeconds } from '../../contracts/limits.ts';
import { RateLimitedError } from './guard.ts';
import { KeyedBuckets } from './keyed-buckets.ts';

export class KeyFailureLimit {
  private readonly buckets: KeyedBuckets;

  constructor(spec = KEY_FAILURES_PER_ADDRESS, maxAddresses = LIMITER_MAX_SUBJECTS) {
    this.buckets = new KeyedBuckets(spec, maxAddresses);
  }

  /**
   * Records a failed attempt from `address`: null while the address is within its budget (the
   * caller answers the failure itself, 401), else the 429 to answer instead.
   */
  failed(address: string | undefined): RateLimitedError | null {
    if (!address) return null;
    const d = this.buckets.take(address);
    if (d.admitted) return null;
    const seconds = retryAfterSeconds(d.retryAfterMs);
    return new RateLimitedError(
      { admitted: false, limit: Infinity, remaining: 0, resetSeconds: seconds, retryAfterSeconds: seconds },
      'basic',
      `too many failed API-key attempts from this address; retry in ${seconds} s`,
    );
  }
}
