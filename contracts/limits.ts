/**
 * Tiers and limits (spec "Limits"), plus the reference token bucket and the per-minute window every
 * rate limiter must agree with. Pure: no I/O, no clock (callers pass the time).
 */

/** Account tiers, lowest first. */
export const TIERS = ['basic', 'pro', 'quant'] as const;
export type Tier = (typeof TIERS)[number];

/** Data-feed transports a tier may be allowed to use. */
export const TRANSPORTS = ['jsonrpc', 'grpc', 'unified', 'disksync'] as const;
export type Transport = (typeof TRANSPORTS)[number];

/**
 * Per-key limits of one tier. "Unlimited" is `Infinity`, not null, so that comparisons such as
 * `count < limit` need no special case.
 */
export type TierLimits = {
  /** Sustained refill rate of the request bucket, requests per second. */
  readonly ratePerSecond: number;
  /** Bucket capacity: requests admitted at once after idling. */
  readonly burst: number;
  /**
   * Requests in any 60 s window: an exact sliding window where it binds harder than the per-second
   * bucket (see `tierWindow`), otherwise implied by that bucket.
   */
  readonly perMinute: number;
  /** Transports the tier may use (spec: JSON-RPC all; gRPC and unified Pro and above; disk-sync Quant). */
  readonly transports: readonly Transport[];
  /**
   * Concurrent streams per key over gRPC server-streaming and the unified SSE stream; past it the
   * stream is refused (SSE `rate_limit`, gRPC RESOURCE_EXHAUSTED). The spec leaves the number
   * open: Basic has no stream transport, so 0.
   */
  readonly concurrentStreams: number;
  /**
   * Concurrent subscriptions per key (JSON-RPC -32005). Disk-sync allows one connection per key,
   * so this is also its per-connection cap (close 4006). The spec leaves the number open.
   */
  readonly subscriptions: number;
};

/** Spec "Limits" table, per key. */
export const TIER_LIMITS: Readonly<Record<Tier, TierLimits>> = Object.freeze({
  basic: Object.freeze({
    ratePerSecond: 10,
    burst: 25,
    perMinute: 100,
    transports: Object.freeze(['jsonrpc'] as const),
    concurrentStreams: 0,
    subscriptions: 10,
  }),
  pro: Object.freeze({
    ratePerSecond: 2_000,
    burst: 500,
    perMinute: 120_000,
    transports: Object.freeze(['jsonrpc', 'grpc', 'unified'] as const),
    concurrentStreams: 10,
    subscriptions: 100,
  }),
  // The spec says "unlimited, no burst figure".
  quant: Object.freeze({
    ratePerSecond: Infinity,
    burst: Infinity,
    perMinute: Infinity,
    transports: Object.freeze(['jsonrpc', 'grpc', 'unified', 'disksync'] as const),
    concurrentStreams: 100,
    subscriptions: 1_000,
  }),
});

/** Whether `tier` may use `transport` at all (otherwise 403 / tier_restricted / close 4003). */
export function tierAllows(tier: Tier, transport: Transport): boolean {
  return TIER_LIMITS[tier].transports.includes(transport);
}

/** Request body maximum, bytes (1 MB read as 2^20); beyond it 413. */
export const MAX_BODY_BYTES = 1_048_576;
/** Calls per JSON-RPC batch; beyond it -32006. */
export const MAX_JSONRPC_BATCH = 100;
/** Largest allowed gRPC `depth`; above it OUT_OF_RANGE. */
export const MAX_GRPC_DEPTH = 1000;
/** Disk-sync WebSocket frame maximum, bytes (4 MiB); beyond it close 1009. */
export const MAX_WS_FRAME_BYTES = 4 * 1024 * 1024;
/** Disk-sync: a pong must arrive within this many ms of a ping, else close 4007. */
export const WS_HEARTBEAT_TIMEOUT_MS = 30_000;
/** Disk-sync connections per API key; another one gets close 4008. */
export const WS_CONNECTIONS_PER_KEY = 1;
/** A feed is stale after strictly more than this many ms without events (SSE `feed_stale`). */
export const FEED_STALE_AFTER_MS = 60_000;
/** In-process key hash cache lifetime, ms; bounds how long a cache hit can outlive a lookup. */
export const KEY_CACHE_TTL_MS = 300_000;
/** Minimum TLS protocol on every transport, in Node's `minVersion` spelling. */
export const MIN_TLS_VERSION = 'TLSv1.2' as const;
/** Days error logs are kept for support. */
export const ERROR_LOG_RETENTION_DAYS = 30;

/** Parameters of one token bucket. */
export type BucketSpec = {
  /** Refill rate, tokens per second. */
  readonly rate: number;
  /** Capacity, tokens. */
  readonly burst: number;
};

/**
 * The token bucket a request of `tier` must pass, taking one token (spec formula, `refill`): the
 * per-second bucket (rate, burst), so a burst of simultaneous requests admits at most `burst`
 * (Basic 25, Pro 500) and then `rate` per second. The per-minute figure is not a bucket (a bucket of
 * perMinute tokens would let a key that idled for a minute spend about twice perMinute in one 60 s
 * window): see `tierWindow`. Quant has none: always admitted.
 */
export function tierBuckets(tier: Tier): readonly BucketSpec[] {
  const t = TIER_LIMITS[tier];
  if (!Number.isFinite(t.ratePerSecond)) return [];
  return [{ rate: t.ratePerSecond, burst: t.burst }];
}

/** Length of the per-minute window, ms. */
export const MINUTE_MS = 60_000;

/**
 * An exact sliding window: a request is admitted only if fewer than `limit` requests were admitted
 * in the closed interval [now − windowMs, now], so no window of `windowMs` (ends included) ever
 * holds more than `limit` admissions.
 */
export type WindowSpec = {
  readonly limit: number;
  readonly windowMs: number;
};

/**
 * The per-minute window of a tier (`perMinute` in any 60 s), only where it binds harder than the
 * per-second bucket, i.e. perMinute < ratePerSecond × 60: Basic (100 < 600). Elsewhere null: the
 * per-second bucket alone already admits at most burst + ratePerSecond × 60 in any 60 s, which for Pro
 * is 500 + 120,000 (its perMinute, +0.4 %); Quant is unlimited.
 */
export function tierWindow(tier: Tier): WindowSpec | null {
  const t = TIER_LIMITS[tier];
  if (!Number.isFinite(t.perMinute) || t.perMinute >= t.ratePerSecond * 60) return null;
  return { limit: t.perMinute, windowMs: MINUTE_MS };
}

/**
 * Spec formula: tokens(t) = min(burst, previous + rate × elapsed seconds).
 * Times are ms; a clock that went backwards counts as no time elapsed, so it never mints tokens.
 * An infinite rate refills at once (avoids ∞ × 0 = NaN on a zero elapsed time).
 */
export function refill(tokens: number, lastMs: number, nowMs: number, rate: number, burst: number): number {
  if (rate === Infinity) return burst;
  const elapsedSeconds = Math.max(0, nowMs - lastMs) / 1000;
  return Math.min(burst, tokens + rate * elapsedSeconds);
}

/** State of one bucket: tokens held as of `lastMs`. */
export type Bucket = { readonly tokens: number; readonly lastMs: number };

/** A bucket that starts full: a new key may spend its whole burst at once. */
export function fullBucket(spec: BucketSpec, nowMs: number): Bucket {
  return { tokens: spec.burst, lastMs: nowMs };
}

export type TakeResult = {
  readonly admitted: boolean;
  /** The bucket after the attempt (refilled, and one token lighter when admitted). */
  readonly bucket: Bucket;
  /** When rejected, ms until one token is available (gRPC `retry-after-ms`); 0 when admitted. */
  readonly retryAfterMs: number;
};

/** Slack for float rounding: 0.1 s × 10/s must make a whole token, not 0.9999999999999999. */
const TOKEN_EPSILON = 1e-9;

/**
 * Refills, then admits when at least one token is available, consuming it (spec "Token bucket").
 * A rejection returns the bucket unchanged: the next refill then starts from the same point, so
 * rejected polls neither cost tokens nor accumulate rounding error.
 */
export function tryTake(bucket: Bucket, nowMs: number, spec: BucketSpec): TakeResult {
  const tokens = refill(bucket.tokens, bucket.lastMs, nowMs, spec.rate, spec.burst);
  if (tokens + TOKEN_EPSILON >= 1) {
    const lastMs = Math.max(bucket.lastMs, nowMs);
    return { admitted: true, bucket: { tokens: Math.max(0, tokens - 1), lastMs }, retryAfterMs: 0 };
  }
  const retryAfterMs = spec.rate > 0 ? Math.ceil(((1 - tokens) / spec.rate) * 1000) : Infinity;
  return { admitted: false, bucket, retryAfterMs };
}

/** The HTTP `Retry-After` header value (whole seconds, at least 1) for a rejection. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}
