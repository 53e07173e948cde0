/**
 * JetStream streams and KV buckets: names, subjects and retention. Spelled here and nowhere else.
 */
import {
  CACHE_STREAM_MAX_AGE_S,
  CACHE_STREAM_MAX_BYTES,
  CACHE_STREAM_MAX_MSGS,
  OWN_STREAM_MAX_AGE_S,
  OWN_STREAM_MAX_BYTES,
  OWN_STREAM_MAX_MSGS,
} from './base-url-limits.ts';
import { ERROR_LOG_ALL, ERROR_LOG_RETENTION_S, STATUS_EVENTS_ALL } from './status.ts';
import { DERIVED_ALL, MD_ALL, OWN_ALL } from './subjects.ts';

export const STREAMS = {
  MD: 'MD',
  SIM: 'SIM',
  CACHE: 'CACHE',
  ACCOUNTS: 'ACCOUNTS',
  JOBS: 'JOBS',
  /** Incidents and maintenance windows (contracts/status.ts). */
  STATUS: 'STATUS',
  /** The error log: one message per error response, kept 30 days. */
  ERRORS: 'ERRORS',
  /** Bars and book snapshots built from `MD` (contracts/derived.ts); retention as `MD`. */
  DERIVED: 'DERIVED',
  /** What accounts publish with `stream: true`: retention and bounds of its own, never `MD`'s window. */
  OWN: 'OWN',
} as const;

export const KV_BUCKETS = {
  keys: 'keys',
  accounts: 'accounts',
  accountKeys: 'account_keys',
  keyUsage: 'key_usage',
  sessions: 'sessions',
  jobs: 'jobs',
  /** `<job_id>.<window>` → a window's outcome (its parts in the artifact store), until the job is stitched. */
  jobWindows: 'job_windows',
  /** `<account_id>.(m|i).<hash>` → the job a `POST /data/generate` queued, for its retries (gateways/http/generation/job-retries.ts). */
  generateRetries: 'generate_retries',
  caches: 'caches',
  /** `<account_id>` → the account's caches and their bytes, counted against its quota (producers/caches/cache-quota.ts). */
  cacheQuota: 'cache_quota',
  leases: 'leases',
  /** `<key_id>` → the leases of the key's open live-data streams, all gateways (gateways/core/stream-slots.ts). */
  streamLeases: 'stream_leases',
  /** `lease.<symbol>.<seed>` → which process produces a live synthetic session (gateways/http/live-sim/session-lease.ts). */
  simSessions: 'sim_sessions',
  /** `<key_id>` → the one disk-sync connection of the key, all gateways: `{holder, expires_ms}` (gateways/disksync/lease.ts). */
  disksyncLeases: 'disksync_leases',
  /** `<account_id>.<batch_id>` → the state of a `stream: true` publish (expires with `OWN`'s max age). */
  publishedBatches: 'published_batches',
  /** `<account_id>.<yyyymmdd>` → the events and bytes the account published with `stream: true` that day (producers/publish-quota.ts). */
  publishQuota: 'publish_quota',
  /** `<key_id>.<slot>` → a JSON-RPC polling filter and its cursor (expires unpolled: bucket max age). */
  jsonrpcFilters: 'jsonrpc_filters',
  /** `incident.<id>` / `maintenance.<id>` → the record projected from `STATUS`. */
  status: 'status',
} as const;

export const OBJECT_STORES = {
  /** Generation artifacts (`<job_id>.parquet`), cache exports (`cache-exports/<key>.parquet`), window parts (`parts/…`). */
  artifacts: 'artifacts',
} as const;

/** Retention knobs that come from configuration. */
export type RetentionLimits = {
  mdMaxAgeSeconds: number;
  mdMaxMsgs: number;
  mdMaxBytes: number;
  /** Stream replicas (1 locally, 3 on a cluster). */
  replicas?: number;
  /** `CACHE` bounds (defaults: contracts/base-url-limits.ts). */
  cacheMaxBytes?: number;
  cacheMaxAgeSeconds?: number;
  /** `OWN` bounds, all accounts together (defaults: contracts/base-url-limits.ts). */
  ownMaxBytes?: number;
  ownMaxAgeSeconds?: number;
  ownMaxMsgs?: number;
};

/**
 * What a region other than home holds as mirrors of the home region's (app/region-copies.ts):
 * what its edges read, each message at the home's own sequence (a client's position is the same
 * in both regions). Its edges' leases and usage counts live in buckets of its own; everything
 * else they write (events, errors) is published to the home region's streams across the link.
 */
export const REGION_MIRRORED_STREAMS: readonly string[] = [STREAMS.MD, STREAMS.DERIVED, STREAMS.OWN];
export const REGION_MIRRORED_BUCKETS: readonly string[] = [KV_BUCKETS.keys, KV_BUCKETS.status];

/** The subset of a JetStream stream config this platform sets. Durations in seconds here. */
export type StreamDefinition = {
  name: string;
  subjects: string[];
  retention: 'limits' | 'workqueue';
  maxAgeSeconds: number;
  maxMsgs: number;
  maxBytes: number;
  /** Window in which a repeated `Nats-Msg-Id` is dropped, seconds. */
  duplicateWindowSeconds: number;
  replicas: number;
  /** At a limit: drop the oldest messages (`old`, the default) or refuse new ones (`new`). */
  discard?: 'old' | 'new';
};

const DAY = 86_400;

/** Kept forever (0 = no limit), limits retention, a 2-minute duplicate window: the common case. */
const KEEP_ALL = {
  retention: 'limits',
  maxAgeSeconds: 0,
  maxMsgs: -1,
  maxBytes: -1,
  duplicateWindowSeconds: 120,
} as const;

export function streamDefinitions(limits: RetentionLimits): StreamDefinition[] {
  const replicas = limits.replicas ?? 1;
  const md = {
    maxAgeSeconds: limits.mdMaxAgeSeconds,
    maxMsgs: limits.mdMaxMsgs,
    maxBytes: limits.mdMaxBytes,
  };
  return [
    { ...KEEP_ALL, ...md, name: STREAMS.MD, subjects: [MD_ALL], replicas },
    // Derived from `MD`, kept as long: a bar outlives neither the events it was built from nor
    // the window a restarted producer re-reads them in.
    { ...KEEP_ALL, ...md, name: STREAMS.DERIVED, subjects: [DERIVED_ALL], replicas },
    {
      // Accounts' own events: bounded apart from `MD`, so a tenant fills this window at most, and
      // each account at most its daily publish quota per day of it (producers/publish-quota.ts).
      ...KEEP_ALL,
      name: STREAMS.OWN,
      subjects: [OWN_ALL],
      maxAgeSeconds: limits.ownMaxAgeSeconds ?? OWN_STREAM_MAX_AGE_S,
      maxBytes: limits.ownMaxBytes ?? OWN_STREAM_MAX_BYTES,
      maxMsgs: limits.ownMaxMsgs ?? OWN_STREAM_MAX_MSGS,
      replicas,
    },
    {
      ...KEEP_ALL,
      name: STREAMS.SIM,
      subjects: ['sim.>'],
      maxAgeSeconds: DAY,
      maxBytes: 2 * 1024 ** 3,
      replicas,
    },
    {
      // Bounded, all accounts together; full, it refuses new caches (503) rather than cut old ones.
      ...KEEP_ALL,
      name: STREAMS.CACHE,
      subjects: ['cache.>'],
      maxAgeSeconds: limits.cacheMaxAgeSeconds ?? CACHE_STREAM_MAX_AGE_S,
      maxBytes: limits.cacheMaxBytes ?? CACHE_STREAM_MAX_BYTES,
      maxMsgs: CACHE_STREAM_MAX_MSGS,
      discard: 'new',
      replicas,
    },
    { ...KEEP_ALL, name: STREAMS.ACCOUNTS, subjects: ['acct.>'], replicas },
    {
      ...KEEP_ALL,
      name: STREAMS.JOBS,
      subjects: ['jobs.>'],
      retention: 'workqueue',
      maxAgeSeconds: 7 * DAY,
      replicas,
    },
    { ...KEEP_ALL, name: STREAMS.STATUS, subjects: [STATUS_EVENTS_ALL], replicas },
    {
      ...KEEP_ALL,
      name: STREAMS.ERRORS,
      subjects: [ERROR_LOG_ALL],
      maxAgeSeconds: ERROR_LOG_RETENTION_S,
      maxBytes: 4 * 1024 ** 3,
      replicas,
    },
  ];
}
