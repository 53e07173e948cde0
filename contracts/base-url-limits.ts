/**
 * What one account can make the `{base_url}` service hold or do, in numbers (docs/limits.md).
 * Defaults of the configuration (platform/config.ts) where a deployment may change them; fixed
 * otherwise. Pure constants.
 */

const MiB = 1024 ** 2;
const DAY_S = 86_400;

/** The `CACHE` stream (every account's caches): bytes, age and messages, all accounts together. */
export const CACHE_STREAM_MAX_BYTES = 1024 * MiB;
export const CACHE_STREAM_MAX_AGE_S = 7 * DAY_S;
export const CACHE_STREAM_MAX_MSGS = 10_000_000;
/**
 * The `OWN` stream (accounts' `stream: true` events), all accounts together: apart from `MD`, so
 * the platform's history never leaves retention because of what tenants publish. Full, it drops
 * its own oldest events.
 */
export const OWN_STREAM_MAX_BYTES = 1024 * MiB;
export const OWN_STREAM_MAX_AGE_S = DAY_S;
export const OWN_STREAM_MAX_MSGS = 5_000_000;

/** Bytes of cached events (`stored_bytes`, summed) one account may hold; past it 429 `quota_exceeded`. */
export const CACHE_QUOTA_BYTES = 64 * MiB;
/** Caches one account may hold at once; past it 429 `quota_exceeded`. */
export const CACHE_QUOTA_COUNT = 1_000;

/**
 * Live synthetic sessions (`/stream/live`): a key's streams count in its concurrent-stream cap
 * like every stream; a Basic key, whose cap of live-data streams is 0, may hold this many.
 */
export const BASIC_SIMULATION_STREAMS = 2;
/** Distinct sessions (symbol, seed) the clients of one account hold open on one process. */
export const LIVE_SESSIONS_PER_ACCOUNT = 4;
/** Distinct sessions one process produces or follows at once. */
export const LIVE_SESSIONS_PER_PROCESS = 200;

/**
 * Console `GET /keys`: at most this many keys listed, the most recently created or changed (an
 * account holds at most 25 active keys); the rate is `keyListPerAccount` (contracts/console-limits.ts).
 */
export const KEY_LIST_MAX = 100;

/**
 * Error responses with no account (no or unknown key) stored one by one, per process per minute, all
 * addresses together; the rest are only counted.
 */
export const ANONYMOUS_ERRORS_STORED_PER_MINUTE = 100;

/** ... and per client address per minute (gateways/core/anonymous-errors.ts). */
export const ANONYMOUS_ERRORS_STORED_PER_ADDRESS_PER_MINUTE = 3;

/** Client addresses whose anonymous errors are counted at once (an LRU; each for a minute). */
export const ANONYMOUS_ERROR_ADDRESSES = 10_000;

/** A retried `POST /data/generate` (same account and manifest, or same Idempotency-Key) attaches to its job this long, s. */
export const GENERATE_RETRY_WINDOW_S = DAY_S;
/** Longest `Idempotency-Key` accepted, characters. */
export const IDEMPOTENCY_KEY_MAX = 255;

/**
 * Events one account may publish with `stream: true` per UTC day, and their bytes (JSON), across
 * every process (producers/publish-quota.ts); past either 429 `quota_exceeded` until the next day.
 * With `OWN`'s one-day age this is the per-account cap on what `OWN` holds: at most two days'
 * quota (yesterday's tail and today's) of one account at any moment.
 */
export const PUBLISH_EVENTS_PER_DAY = 200_000;
export const PUBLISH_BYTES_PER_DAY = 64 * MiB;
