/**
 * The console's abuse limits (numbers in `contracts/console-limits.ts`), per process: token buckets
 * per client address and per account for register, login and key creation, and an exponential lock
 * after failed logins: per (email, address) pair at 5 failures, per address at 20, per email alone
 * only at 100, so a user is not locked out by failures made from elsewhere until very many. Each refusal is a `RateLimitedError`: 429
 * `rate_limited` with `Retry-After`. All state is LRU-bounded (`LIMITER_MAX_SUBJECTS` per limiter).
 */
import {
  CONSOLE_LIMITS,
  LIMITER_MAX_SUBJECTS,
  LOGIN_BACKOFF_PER_ADDRESS,
  LOGIN_BACKOFF_PER_EMAIL,
  LOGIN_BACKOFF_PER_PAIR,
} from '../../contracts/console-limits.ts';
import { retryAfterSeconds } from '../../contracts/limits.ts';
import { RateLimitedError } from '../core/guard.ts';
import { KeyedBuckets } from '../core/keyed-buckets.ts';
import { FailureLockout } from './failure-lockout.ts';

type Limit = keyof typeof CONSOLE_LIMITS;

/** A 429 with only `Retry-After` (these limits are not a key's tier quota, so no X-RateLimit-*). */
export function tooMany(retryAfterMs: number, what: string): RateLimitedError {
  const seconds = retryAfterSeconds(retryAfterMs);
  return new RateLimitedError(
    { admitted: false, limit: Infinity, remaining: 0, resetSeconds: seconds, retryAfterSeconds: seconds },
    'basic',
    `${what}; retry in ${seconds} s`,
  );
}

export class ConsoleLimits {
  private readonly buckets = Object.fromEntries(
    Object.entries(CONSOLE_LIMITS).map(([name, spec]) => [
      name,
      new KeyedBuckets(spec, LIMITER_MAX_SUBJECTS),
    ]),
  ) as Record<Limit, KeyedBuckets>;
  private readonly failedByPair = new FailureLockout(LOGIN_BACKOFF_PER_PAIR, LIMITER_MAX_SUBJECTS);
  private readonly failedByEmail = new FailureLockout(LOGIN_BACKOFF_PER_EMAIL, LIMITER_MAX_SUBJECTS);
  private readonly failedByAddress = new FailureLockout(LOGIN_BACKOFF_PER_ADDRESS, LIMITER_MAX_SUBJECTS);

  /** Takes one token from `limit` for `subject`, or throws 429. */
  take(limit: Limit, subject: string, what: string): void {
    const d = this.buckets[limit].take(subject);
    if (!d.admitted) throw tooMany(d.retryAfterMs, what);
  }

  register(address: string, email: string): void {
    this.take('registerPerAddress', address, 'too many registrations from this address');
    this.take('registerPerEmail', email, 'too many registration attempts for this email');
  }

  /** Before a login attempt: refused while a failed-login lock holds, or over the attempt rates. */
  login(address: string, email: string): void {
    const wait = Math.max(
      this.failedByPair.waitMs(pair(address, email)),
      this.failedByAddress.waitMs(address),
      this.failedByEmail.waitMs(email),
    );
    if (wait > 0) throw tooMany(wait, 'too many failed logins; wait before trying again');
    this.take('loginPerAddress', address, 'too many login attempts from this address');
    this.take('loginPerPair', pair(address, email), 'too many login attempts for this email');
    this.take('loginPerEmail', email, 'too many login attempts for this email');
  }

  loginFailed(address: string, email: string): void {
    this.failedByPair.fail(pair(address, email));
    this.failedByAddress.fail(address);
    this.failedByEmail.fail(email);
  }

  loginSucceeded(address: string, email: string): void {
    this.failedByPair.succeed(pair(address, email));
    this.failedByEmail.succeed(email);
  }

  createKey(address: string, accountId: string): void {
    this.take('keysPerAddress', address, 'too many keys created from this address');
    this.take('keysPerAccount', accountId, 'too many keys created for this account');
  }
}

/** One subject per (email, address) pair. */
const pair = (address: string, email: string): string => `${email}\u0000${address}`;
