/**
 * Cache tools and their legacy routes (stats, manifest, export link, replay, delete), one handler
 * each for MCP and REST. Every handler works on the caller's account only (`ownerOf`): another
 * account's cache, like an unknown or malformed key, is a 404 with the error body.
 */

import { readCache } from '../../../consumers/caches/cache-reader.ts';
import type { CacheManifest } from '../../../contracts/caches.ts';
import { ApiError } from '../../../contracts/errors.ts';
import {
  DELETE_CACHE,
  EXPORT_CACHE,
  GET_CACHE_MANIFEST,
  GET_CACHE_STATS,
  STREAM_CACHE,
} from '../../../contracts/mcp-data-tools.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { CacheStore } from '../../../producers/caches/cache-store.ts';
import type { Principal } from '../../core/guard.ts';
import { defineTool, type ToolDefinition } from '../mcp/tool-registry.ts';

export type CacheToolDeps = { nats: Nats; caches: CacheStore };

const ratio = (raw: number, stored: number) =>
  stored > 0 ? Math.round((raw / stored) * 1_000) / 1_000 : null;

/** The caller's account: caches belong to one. A principal without an account has none to use. */
export function ownerOf(principal: Principal | null | undefined): string {
  const account = principal?.accountId;
  if (!account) throw new ApiError('forbidden', 'caches belong to an account; this caller has none');
  return account;
}

/** The manifest of one of the account's caches, or 404 (unknown, malformed or another's). */
export async function existingCache(
  caches: CacheStore,
  accountId: string,
  key: string,
): Promise<CacheManifest> {
  const m = await caches.get(accountId, key);
  if (!m) throw new ApiError('not_found', `no cache ${key}`);
  return m;
}

export function cacheStats(list: CacheManifest[]) {
  const caches = list.map((m) => ({
    cache_key: m.cache_key,
    source: m.source,
    symbol: m.symbol,
    events: m.event_count,
    first_timestamp_ms: m.first_timestamp_ms,
    last_timestamp_ms: m.last_timestamp_ms,
    raw_json_bytes: m.raw_json_bytes,
    stored_bytes: m.stored_bytes,
    compression_ratio: ratio(m.raw_json_bytes, m.stored_bytes),
    created_at: m.created_at,
  }));
  const raw = caches.reduce((n, c) => n + c.raw_json_bytes, 0);
  const stored = caches.reduce((n, c) => n + c.stored_bytes, 0);
  const events = caches.reduce((n, c) => n + c.events, 0);
  return {
    caches,
    totals: {
      caches: caches.length,
      events,
      raw_json_bytes: raw,
      stored_bytes: stored,
      compression_ratio: ratio(raw, stored),
    },
  };
}

export function cacheTools(deps: CacheToolDeps): ToolDefinition[] {
  return [
    defineTool({
      spec: GET_CACHE_STATS,
      run: async (_args, ctx) => cacheStats(await deps.caches.list(ownerOf(ctx.principal))),
      legacy: { method: 'GET', url: '/mcp/caches/stats', access: 'mcp' },
    }),
    defineTool({
      spec: GET_CACHE_MANIFEST,
      run: (args, ctx) => existingCache(deps.caches, ownerOf(ctx.principal), args.cache_key),
      legacy: { method: 'GET', url: '/mcp/caches/:cache_key/manifest', access: 'mcp' },
    }),
    defineTool({
      spec: EXPORT_CACHE,
      // The download route needs `mcp` and the owner's account: what this tool needs to run.
      run: async (args, ctx) => {
        const m = await existingCache(deps.caches, ownerOf(ctx.principal), args.cache_key);
        return {
          cache_key: m.cache_key,
          events: m.event_count,
          format: 'parquet',
          download_url: `${ctx.baseUrl}/mcp/caches/export/${m.cache_key}`,
        };
      },
    }),
    defineTool({
      spec: STREAM_CACHE,
      run: async (args, ctx) => {
        const m = await existingCache(deps.caches, ownerOf(ctx.principal), args.cache_key);
        const events: unknown[] = [];
        if (args.limit > 0) {
          for await (const { json } of readCache(deps.nats, m, args.after_seq + 1)) {
            events.push(JSON.parse(json));
            if (events.length >= args.limit) break;
          }
        }
        const last = (events.at(-1) as { seq: number } | undefined)?.seq ?? args.after_seq;
        return {
          cache_key: m.cache_key,
          stream_url: `${ctx.baseUrl}/mcp/caches/stream/${m.cache_key}`,
          events,
          next_after_seq: last,
          complete: last >= m.last_seq,
        };
      },
    }),
    defineTool({
      spec: DELETE_CACHE,
      run: async (args, ctx) => {
        if (!(await deps.caches.delete(ownerOf(ctx.principal), args.cache_key)))
          throw new ApiError('not_found', `no cache ${args.cache_key}`);
        return { deleted: true, cache_key: args.cache_key };
      },
      legacy: { method: 'DELETE', url: '/mcp/caches/:cache_key', access: 'mcp' },
    }),
  ];
}
