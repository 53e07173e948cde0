/**
 * Cache routes that are not plain tool calls (scope `mcp`): the Parquet export (written once per
 * cache key into the artifact store, then streamed, with Range), the SSE replay (id = stream
 * sequence, resumable with Last-Event-ID, ends with `event: end`), and clearing every cache of the caller's account
 * (`?confirm=true` exactly). Each sees only the caller's account's caches: others' are 404.
 */
import type { FastifyInstance } from 'fastify';
import { exportedCacheFile } from '../../../consumers/caches/cache-exporter.ts';
import { readCache } from '../../../consumers/caches/cache-reader.ts';
import { ApiError } from '../../../contracts/errors.ts';
import type { ArtifactStore } from '../../../platform/artifact-store/store.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { CacheStore } from '../../../producers/caches/cache-store.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import { nowNs } from '../../core/feed-event.ts';
import { SseConnection, type SseConnectionOptions } from '../../core/sse-connection.ts';
import { parseStreamRequest } from '../../unified/stream-query.ts';
import { sendStored } from '../generation/artifact-file.ts';
import type { RequireKey } from '../require-key.ts';
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

  app.get<{ Params: { cache_key: string } }>('/mcp/caches/stream/:cache_key', mcp, async (req, reply) => {
    const manifest = await existingCache(deps.caches, ownerOf(req.principal), req.params.cache_key);
    const { lastEventId } = parseStreamRequest({}, req.headers['last-event-id']);
    const conn = new SseConnection(
      reply.raw,
      { ...deps.connection, requestId: req.id },
      deps.registry.flusher,
    );
    const abort = new AbortController();
    if (
      !deps.registry.start(conn, reply, {
        principal: req.principal,
        headers: reply.getHeaders() as Record<string, string>,
        onClose: () => abort.abort(),
      })
    )
      return;
    let last = lastEventId ?? 0;
    try {
      for await (const { seq, event } of readCache(deps.nats, manifest, last + 1, abort.signal)) {
        const json = JSON.stringify({ seq, ...event });
        conn.event({
          seq,
          source: event.source,
          symbol: event.symbol,
          eventType: event.event_type,
          owner: manifest.account_id,
          json,
          receivedAtNs: nowNs(),
          wire: {},
        });
        last = seq;
        const wait = conn.ready();
        if (wait) await wait;
        if (conn.closed) return;
      }
      conn.finish({ cache_key: manifest.cache_key, last_event_id: last, complete: true });
    } catch (err) {
      req.log.error({ err: String(err) }, 'cache replay failed');
      conn.terminate('internal');
    }
  });

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
