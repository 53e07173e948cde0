/**
 * `GET /api/v1/unified/stream`: guard → validate → subscribe → position → open. Every failure
 * before the first byte is a real HTTP status with the error body (a browser EventSource does not
 * retry a 401); after it, failures are `event: error` messages. What the request means (coins
 * resolved, sources allowed, warnings, stale coins) is the core's (subscribe.ts): this file is
 * the SSE spelling of it.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import { type AttachedFeed, attachFeed, sendStale } from '../core/attach-feed.ts';
import { clientAddress } from '../core/client-address.ts';
import type { ConnectionRegistry } from '../core/connection-registry.ts';
import { assertNotRevoked, type Guard, rateLimitHeaders } from '../core/guard.ts';
import type { FeedDeps } from '../core/replay-source.ts';
import { runKey, selectionKey } from '../core/selection.ts';
import { SseConnection, type SseConnectionOptions } from '../core/sse-connection.ts';
import { parseSseSubscription } from '../core/sse-query.ts';
import { type Subscribed, subscribe } from '../core/subscribe.ts';

export type StreamRouteDeps = FeedDeps & {
  guard: Guard;
  region: 'us' | 'jp';
  registry: ConnectionRegistry;
  connection: Omit<SseConnectionOptions, 'requestId'>;
};

export function registerStreamRoute(app: FastifyInstance, deps: StreamRouteDeps): void {
  app.get('/api/v1/unified/stream', async (req, reply) => {
    // A client that has gone before its stream opens stops the coin resolution (own-coins.ts).
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort(new ApiError('cancelled', 'the client closed the request')));
    // Who is asking comes first: a keyless request is 401 whatever its query says.
    const principal = await deps.guard.admit({
      surface: 'unified',
      region: deps.region,
      headers: req.headers,
      query: req.query as Record<string, unknown>,
      requestId: req.id,
      clientIp: clientAddress(req.socket, req.headers),
      capability: 'stream:read',
      stream: true,
    });
    let subscribed: Subscribed;
    try {
      const request = parseSseSubscription(req.query, req.headers['last-event-id']);
      subscribed = await subscribe(deps, request, principal, { signal: gone.signal });
    } catch (err) {
      principal.release();
      if (gone.signal.aborted) return reply.hijack(); // nobody to answer
      throw err;
    }
    const { selection } = subscribed;
    // A viewer's ids carry its own events' position once it has one (own-feed.ts).
    const position = selection.viewer ? { md: 0, own: subscribed.lastOwnSeq } : null;
    const conn = new SseConnection(
      reply.raw,
      {
        ...deps.connection,
        requestId: req.id,
        selectionKey: selectionKey(selection),
        runKey: runKey('sse', selection),
      },
      deps.registry.flusher,
      position,
    );
    let attached: AttachedFeed;
    try {
      attached = await attachFeed(deps, subscribed, conn, {
        what: 'stream',
        onPositioned: (after) => {
          if (position) position.md = after;
        },
      });
    } catch (err) {
      principal.release();
      throw err;
    }
    const sub = attached.feed;
    try {
      assertNotRevoked(principal);
    } catch (err) {
      sub.close();
      principal.release();
      throw err;
    }
    const headers = principal.rateLimit ? rateLimitHeaders(principal.rateLimit) : {};
    const started = deps.registry.start(conn, {
      principal,
      headers,
      onClose: () => sub.close(),
      takeOver: () => reply.hijack(),
    });
    if (!started) return;
    sendStale(conn, attached.staleFeeds());
  });
}
