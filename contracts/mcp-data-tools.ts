/**
 * MCP tools over normalized data: caches now; normalization, funding and venues join here. Same
 * shape as `mcp-tools.ts` (name, description, zod input); handlers in `gateways/http/`.
 */
import { z } from 'zod';
import { ExportRequest } from './export.ts';
import { FundingRequest } from './funding.ts';
import type { McpToolSpec } from './mcp-tools.ts';
import { NormalizeBody } from './normalize.ts';

/**
 * A cache key as `normalize_events` returns it (`cache_` + 32 hex digits). Any string is accepted
 * here: a malformed key names no cache, so it is a 404 like an unknown one, on every route.
 */
const cacheKey = z
  .string()
  .describe('a cache key as normalize_events returns it: cache_ followed by 32 hex digits');

export const GET_CACHE_STATS = {
  name: 'get_cache_stats',
  description:
    'Every cache of normalized events with its event count, exchange-time range, raw JSON bytes vs stored bytes and their ratio, plus totals.',
  input: z.object({}).strict(),
} as const satisfies McpToolSpec;

export const GET_CACHE_MANIFEST = {
  name: 'get_cache_manifest',
  description:
    'Provenance of one cache: source, symbol, created at, event count, time range, content hash, normalizer version.',
  input: z.object({ cache_key: cacheKey }).strict(),
} as const satisfies McpToolSpec;

export const EXPORT_CACHE = {
  name: 'export_cache',
  description:
    'Export one cache as a Parquet file (written by DuckDB): returns the download URL (send your X-API-Key) and the event count.',
  input: z.object({ cache_key: cacheKey }).strict(),
} as const satisfies McpToolSpec;

export const STREAM_CACHE = {
  name: 'stream_cache',
  description:
    'Replay one cache: returns the SSE URL (id = stream sequence, resumable with Last-Event-ID) and, inline, up to `limit` events from `after_seq`.',
  input: z
    .object({
      cache_key: cacheKey,
      after_seq: z.number().int().min(0).default(0),
      limit: z.number().int().min(0).max(1_000).default(100),
    })
    .strict(),
} as const satisfies McpToolSpec;

export const DELETE_CACHE = {
  name: 'delete_cache',
  description: 'Delete one cache (its events and its manifest). Irreversible.',
  input: z.object({ cache_key: cacheKey }).strict(),
} as const satisfies McpToolSpec;

export const SIMULATE_FUNDING_REGIME = {
  name: 'simulate_funding_regime',
  description:
    'Simulate funding payments of a position on a venue (binance, bybit, okx: premium + clamped interest with caps; hyperliquid: hourly at 1/8 of the 8-hour rate on the oracle; sgx: within its bounds; cme: no funding, basis convergence). Period 0 uses the given spot and mark; later periods follow a seeded premium path. Returns every period (rate, bps, premium, mark, index, signed payment: positive rate → the long pays) and a summary.',
  input: FundingRequest,
} as const satisfies McpToolSpec;

export const GET_VENUE_DETAILS = {
  name: 'get_venue_details',
  description:
    'Venue facts for binance, hyperliquid, okx, bybit, cme or sgx: product, funding interval and parameters, caps, BTC/ETH tick and lot sizes, fees, trading hours, settlement currency; unverified items are marked.',
  input: z.object({ exchange: z.string().min(1).max(32) }).strict(),
} as const satisfies McpToolSpec;

export const NORMALIZE_EVENTS = {
  name: 'normalize_events',
  description:
    'Normalize source-native market events (synthetic, hyperliquid, binance, cme, sgx) to the canonical trade and book schema. Returns events in input order, rejected elements with their index and reason, and, when asked, the cache key (enable_cache) and the count published to the live stream (stream).',
  input: NormalizeBody,
} as const satisfies McpToolSpec;

export const EXPORT_RANGE = {
  name: 'export_range',
  description:
    'Export stored market events of a time range (coins, optional sources and event types, from and to as Unix ms or ISO 8601, by the time the stream stored them, both included) as a Parquet or CSV file written by DuckDB. Asynchronous: returns the job {status: queued, job_id, status_url, first_seq, last_seq}; poll status_url (progress, then result.download_url, content_length_bytes, sha256). Same events, same bytes.',
  input: ExportRequest,
} as const satisfies McpToolSpec;
