/**
 * Caches of normalized events: one cache per normalize request that asks for it, owned by the
 * caller's account. Events on the `CACHE` stream under `cache.<account_id>.<cache_key>.<event_type>`
 * (compact JSON, contracts/event-wire.ts), the manifest in KV `caches` under
 * `<account_id>.<cache_key>`: every read, listing and purge is addressed through the owner, so one
 * account can never reach another's cache (it does not exist for them: 404). The key is derived
 * from the owner and the content, so the same events cached twice by one account are one cache,
 * and two accounts never share one.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { EventType, MarketEvent } from './events.ts';
import { accountToken } from './subjects.ts';

export const CACHE_KEY = /^cache_[0-9a-f]{32}$/;

/** Whether `key` has the shape of a cache key (anything else is an unknown cache: 404). */
export const isCacheKey = (key: string): boolean => CACHE_KEY.test(key);

/** The subject of one cache's events of one type: the routing a reader needs is in the subject. */
export const cacheSubject = (accountId: string, cacheKey: string, eventType: EventType): string =>
  `cache.${accountToken(accountId)}.${cacheKey}.${eventType}`;

/** Every event of one cache (one filter: usable by a 2.9 consumer). */
export const cacheFilter = (accountId: string, cacheKey: string): string =>
  `cache.${accountToken(accountId)}.${cacheKey}.*`;

/** The event type of a cache subject; null for anything else. */
export function parseCacheSubject(subject: string): { eventType: string } | null {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== 'cache') return null;
  return { eventType: parts[3] as string };
}

/** Every cache of one account (purged by "clear all"). */
export const accountCacheFilter = (accountId: string): string => `cache.${accountToken(accountId)}.>`;

/** The KV `caches` key of a manifest. */
export const cacheManifestKey = (accountId: string, cacheKey: string): string =>
  `${accountToken(accountId)}.${cacheKey}`;

/** Every manifest key of one account (a KV key filter). */
export const accountCacheManifests = (accountId: string): string => `${accountToken(accountId)}.*`;

/** Provenance and statistics of one cache (`GET /mcp/caches/{cache_key}/manifest`). */
export type CacheManifest = {
  cache_key: string;
  /** The account that created it: the only one that sees it. */
  account_id: string;
  source: string;
  symbol: string;
  /** ISO 8601. */
  created_at: string;
  event_count: number;
  /** Exchange-time range of the events, Unix ms. */
  first_timestamp_ms: number;
  last_timestamp_ms: number;
  /** `sha256:` of the RFC 8785 canonical JSON of the events, in order. */
  content_hash: string;
  normalizer_version: string;
  /** The source-native payloads as JSON, bytes. */
  raw_json_bytes: number;
  /** What the cache occupies on the stream (MessagePack), bytes. */
  stored_bytes: number;
  /** Stream sequences of the first and last event. */
  first_seq: number;
  last_seq: number;
};

export function contentHash(events: readonly MarketEvent[]): string {
  return `sha256:${createHash('sha256')
    .update(canonicalize(events) ?? '[]')
    .digest('hex')}`;
}

/** Deterministic: the same account, source, symbol and events always give the same key. */
export function cacheKeyOf(accountId: string, source: string, symbol: string, hash: string): string {
  const input = `${accountId}\n${source}\n${symbol}\n${hash}`;
  return `cache_${createHash('sha256').update(input).digest('hex').slice(0, 32)}`;
}
