/**
 * Caches of normalized events: one cache per normalize request that asks for it, stored on the
 * `CACHE` stream under `cache.<cache_key>`, its provenance in KV `caches`. The key is derived from
 * the content, so the same events cached twice are one cache.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { MarketEvent } from './events.ts';

export const CACHE_KEY = /^cache_[0-9a-f]{32}$/;

export const cacheSubject = (cacheKey: string): string => `cache.${cacheKey}`;

/** Provenance and statistics of one cache (`GET /mcp/caches/{cache_key}/manifest`). */
export type CacheManifest = {
  cache_key: string;
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

/** Deterministic: the same source, symbol and events always give the same key. */
export function cacheKeyOf(source: string, symbol: string, hash: string): string {
  return `cache_${createHash('sha256').update(`${source}\n${symbol}\n${hash}`).digest('hex').slice(0, 32)}`;
}
