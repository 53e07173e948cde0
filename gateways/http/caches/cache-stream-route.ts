/**
 * `GET /mcp/caches/stream/{cache_key}` (scope `mcp`): SSE replay of one cache of the caller's
 * account (others' are 404), id = `CACHE` stream sequence, resumable with `Last-Event-ID`, ending
 * with `event: end`. The loop is the core's (`replayRange`), the one every resume uses.
 */
import type { FastifyInstance } from 'fastify';
import { type CacheManifest, cacheFilter, parseCacheSubject } from '../../../contracts/caches.ts';
import { STREAMS } from '../../../contracts/streams.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { CacheStore } from '../../../producers/caches/cache-store.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import type { SubjectParser } from '../../core/feed-event.ts';
import { type HistorySpec, replayRange } from '../../core/replay-source.ts';
import { SseConnection, type SseConnectionOptions } from '../../core/sse-connection.ts';
import { lastEventIdOf } from '../../core/sse-query.ts';
import type { RequireKey } from '../require-key.ts';
import { existingCache, ownerOf } from './cache-tools.ts';

export type CacheStreamRouteDeps = {
  nats: Nats;
  caches: CacheStore;
  requireKey: RequireKey;
  registry: ConnectionRegistry;
  connection: Omit<SseConnectionOptions, 'requestId'>;
};

/** The cache's events as a history: routing from the manifest and the subject's event type. */
function cacheHistory(manifest: CacheManifest): HistorySpec {
  const parse: SubjectParser = (subject) => {
    const parts = parseCacheSubject(subject);
    return parts
      ? {
          source: manifest.source,
          symbol: manifest.symbol,
          eventType: parts.eventType,
          owner: manifest.account_id,
        }
      : null;
  };
  return { stream: STREAMS.CACHE, filter: cacheFilter(manifest.account_id, manifest.cache_key), parse };
}

export function registerCacheStreamRoute(app: FastifyInstance, deps: CacheStreamRouteDeps): void {
  app.get<{ Params: { cache_key: string } }>(
    '/mcp/caches/stream/:cache_key',
    { preHandler: deps.requireKey('mcp') },
    async (req, reply) => {
      const manifest = await existingCache(deps.caches, ownerOf(req.principal), req.params.cache_key);
      const lastEventId = lastEventIdOf(req.headers['last-event-id']) ?? 0;
      const conn = new SseConnection(
        reply.raw,
        { ...deps.connection, requestId: req.id },
        deps.registry.flusher,
      );
      const abort = new AbortController();
      const started = deps.registry.start(conn, {
        takeOver: () => reply.hijack(),
        principal: req.principal,
        headers: reply.getHeaders() as Record<string, string>,
        onClose: () => abort.abort(),
      });
      if (!started) return;
      const selection = { coins: null, eventTypes: null, sources: null, viewer: manifest.account_id };
      const range = { after: Math.max(lastEventId, manifest.first_seq - 1), lastSeq: manifest.last_seq };
      try {
        const last = await replayRange(
          { nats: deps.nats, log: req.log as Logger },
          cacheHistory(manifest),
          selection,
          range,
          conn,
          abort.signal,
        );
        if (!conn.closed)
          conn.finish({
            cache_key: manifest.cache_key,
            last_event_id: last,
            complete: last >= manifest.last_seq,
          });
      } catch (err) {
        req.log.error({ err: String(err) }, 'cache replay failed');
        conn.terminate('internal');
      }
    },
  );
}
