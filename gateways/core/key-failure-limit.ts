/**
 * Failed API-key attempts (missing, malformed, unknown key) per client address, at the edge guard:
 * a token bucket per address (`KEY_FAILURES_PER_ADDRESS`, 30 at once then 30 per minute) that only
 * failures spend. While an address's bucket is empty its requests are refused with 429 before any
 * lookup, so guessing keys costs the guesser, not the key store. LRU-bounded (`LIMITER_MAX_SUBJECTS`
 * addresses) and per process; a request without a known address is never limited here.
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

  /** Throws 429 (with Retry-After) while `address` has spent its failures. */
  check(address: string | undefined): void {
    if (!address) return;
    const wait = this.buckets.waitMs(address);
    if (wait <= 0) return;
    const seconds = retryAfterSeconds(wait);
    throw new RateLimitedError(
      { admitted: false, limit: Infinity, remaining: 0, resetSeconds: seconds, retryAfterSeconds: seconds },
      'basic',
      `too many failed API-key attempts from this address; retry in ${seconds} s`,
    );
  }

  failed(address: string | undefined): void {
    if (address) this.buckets.take(address);
  }
}
