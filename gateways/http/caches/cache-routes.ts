/**
 * Cache routes that are not plain tool calls (scope `mcp`): the Parquet export (written once per
 * cache key into the artifact store, then streamed, with Range), the SSE replay (id = stream
 * sequence, resumable with Last-Event-ID, ends with `event: end`), and clearing every cache of the caller's account
 * (`?confirm=true` exactly). Each sees only the caller's account's caches: others' are 404.
 */
import type { FastifyInstance } from 'fastify';
import { exportedCacheFile } from '../../../consumers/caches/cache-exporter.ts';
import { ApiError } from '../../../contracts/errors.ts';
import type { ArtifactStore } from '../../../platform/artifact-store/store.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { CacheStore } from '../../../producers/caches/cache-store.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import type { SseConnectionOptions } from '../../core/sse-connection.ts';
import { sendStored } from '../generation/artifact-file.ts';
import type { RequireKey } from '../require-key.ts';
import { registerCacheStreamRoute } from './cache-stream-route.ts';
import { existingCache, ownerOf } from './cache-tools.ts';

export type CacheRouteDeps = {
  nats: Nats;
  caches: CacheStore;
  /** Where exported Parquet files are kept (one per cache key): the configured artifact store. */
  store: ArtifactStore;
  requireKey: RequireKey;
  registry: ConnectionRegistry;
  connection: Omit<SseConnectionOptions, 'requestId'>;
};

export function registerCacheRoutes(app: FastifyInstance, deps: CacheRouteDeps): void {
  const mcp = { preHandler: deps.requireKey('mcp') };

  app.get<{ Params: { cache_key: string } }>('/mcp/caches/export/:cache_key', mcp, async (req, reply) => {
    const manifest = await existingCache(deps.caches, ownerOf(req.principal), req.params.cache_key);
    const file = await exportedCacheFile(deps.nats, manifest, deps.store);
    return sendStored(reply, deps.store, file.name, req.headers.range, `${manifest.cache_key}.parquet`);
  });

  registerCacheStreamRoute(app, deps);

  app.delete<{ Querystring: Record<string, string> }>('/mcp/caches', mcp, async (req) => {
    const extra = Object.keys(req.query ?? {}).filter((k) => k !== 'confirm');
    if (req.query?.confirm !== 'true' || extra.length > 0) {
      throw new ApiError('invalid_params', 'clearing all your caches needs ?confirm=true (exactly)', {
        field: 'confirm',
        reason: 'must be exactly "true"',
      });
    }
    return { deleted: await deps.caches.deleteAll(ownerOf(req.principal)) };
  });
}
