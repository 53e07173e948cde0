/**
 * Abuse limits of the console (`/api/v1/console`) and of failed API-key attempts, per process.
 * Each is a token bucket (burst, then `rate` per second) keyed by client address or by account
 * (the email for register, the email and the (email, address) pair for login, the account id for
 * key creation); failed logins add an exponential lock. Every refusal is 429 `rate_limited` with
 * `Retry-After`. Pure data.
 */
import type { BucketSpec } from './limits.ts';

const perHour = (n: number, burst = n): BucketSpec => ({ rate: n / 3_600, burst });
const perMinute = (n: number, burst = n): BucketSpec => ({ rate: n / 60, burst });

export const CONSOLE_LIMITS = {
  /** Registrations per client address: 10 per hour. */
  registerPerAddress: perHour(10),
  /** Registration attempts per email: 3 per hour. */
  registerPerEmail: perHour(3),
  /** Login attempts per client address: 30 per minute. */
  loginPerAddress: perMinute(30),
  /** Login attempts per (email, client address) pair: 10 per minute. */
  loginPerPair: perMinute(10),
  /**
   * Login attempts per email from all addresses together: 300 per minute (30 times a pair's, and
   * above the 100 failures that lock the email: spending it from elsewhere is not a cheap way to
   * keep a known user out).
   */
  loginPerEmail: perMinute(300),
  /** Key creations per account: burst 10, then 20 per hour. */
  keysPerAccount: perHour(20, 10),
  /** Key creations per client address: burst 30, then 60 per hour. */
  keysPerAddress: perHour(60, 30),
  /** Key listings (`GET /keys`, each up to KEY_LIST_MAX keys read) per account: burst 10, then 60 per minute. */
  keyListPerAccount: perMinute(60, 10),
} as const satisfies Record<string, BucketSpec>;

/**
 * Failed logins per (email, client address) pair: 5 free, then a lock of 1 s doubling with each
 * further failure (2 s, 4 s, …) up to 15 min; a success clears it; an hour without failures forgets
 * them. The lock holds that pair only: the same user logging in from elsewhere is not locked.
 */
export const LOGIN_BACKOFF_PER_PAIR = {
  freeFailures: 5,
  baseMs: 1_000,
  maxMs: 15 * 60_000,
  forgetAfterMs: 3_600_000,
} as const;

/**
 * Failed logins per email from all addresses together: the same lock, but only past 100 failures,
 * so locking a known user out from elsewhere takes 100 failures within the hour: more than one
 * address can make (its pair's lock lets about 17 through in an hour), 20 addresses to do it at once.
 */
export const LOGIN_BACKOFF_PER_EMAIL = { ...LOGIN_BACKOFF_PER_PAIR, freeFailures: 100 } as const;

/** Failed logins per client address, any emails: the same, with 20 free (one address may front many users). */
export const LOGIN_BACKOFF_PER_ADDRESS = { ...LOGIN_BACKOFF_PER_PAIR, freeFailures: 20 } as const;

/**
 * Failed API-key attempts (malformed or unknown key, session token) per client address at the edge
 * guard: 30 at once, then one every 2 s (30 per minute); past it such attempts are 429, not 401.
 * A request with no key is a 401 and spends nothing; valid keys never spend it nor are refused by it.
 */
export const KEY_FAILURES_PER_ADDRESS = perMinute(30);

/** Subjects (addresses, emails, accounts) each limiter tracks at most: an LRU, so memory stays flat. */
export const LIMITER_MAX_SUBJECTS = 100_000;

/**
 * Refusals (401, 403, 429 at the edge guard) one address is answered at once: 100, then 50 a
 * second. Past that each refusal is answered after `REFUSAL_DELAY_MS`, so a client retrying in a
 * loop costs the edge a timer per second per request in flight instead of a request's work, and
 * the process's time stays with everyone else (gateways/core/refusal-pacer.ts). At most
 * `REFUSALS_HELD_MAX` answers are held at once per process; past it they are answered at once.
 */
export const REFUSALS_AT_ONCE_PER_ADDRESS: BucketSpec = { rate: 50, burst: 100 };
export const REFUSAL_DELAY_MS = 1_000;
export const REFUSALS_HELD_MAX = 10_000;
