/**
 * `GET /api/v1/unified/stream`: validate → guard → position → open. Every failure before the
 * first byte is a real HTTP status with the error body (a browser EventSource does not retry a
 * 401); after it, failures are `event: error` messages.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import type { ConnectionRegistry } from '../core/connection-registry.ts';
import { assertNotRevoked, type Guard, rateLimitHeaders } from '../core/guard.ts';
import { ownsCoin } from '../core/own-coins.ts';
import { type FeedDeps, type FeedSubscription, openFeed } from '../core/replay-source.ts';
import { type Selection, selectionKey } from '../core/selection.ts';
import type { SseConnectionOptions } from '../core/sse-connection.ts';
import { SseConnection } from '../core/sse-connection.ts';
import { viewerOf } from '../core/visibility.ts';
import { parseStreamRequest } from './stream-query.ts';

export type StreamRouteDeps = FeedDeps & {
  guard: Guard;
  region: 'us' | 'jp';
  registry: ConnectionRegistry;
  connection: Omit<SseConnectionOptions, 'requestId'>;
};

/**
 * Splits requested coins into tracked and unknown ones (exact spelling first, then upper case):
 * the platform's known coins, then coins the viewer's own account has published.
 */
async function resolveCoins(
  deps: StreamRouteDeps,
  coins: string[],
  viewer: string | null,
): Promise<{ known: string[]; unknown: string[] }> {
  const known: string[] = [];
  const unknown: string[] = [];
  for (const c of coins) {
    const spellings = [...new Set([c, c.toUpperCase()])];
    let hit = spellings.find((x) => deps.tail.health.knows(x));
    for (const x of spellings) if (!hit && (await ownsCoin(deps.nats, viewer, x))) hit = x;
    if (hit) known.push(hit);
    else unknown.push(c);
  }
  return { known: [...new Set(known)], unknown };
}

/** Requested sources within what the key's chain scopes allow; asking for more is a 403. */
function allowedSources(
  requested: string[] | null,
  allowed: ReadonlySet<string> | null,
): ReadonlySet<string> | null {
  if (!allowed) return requested ? new Set(requested) : null;
  if (!requested) return allowed;
  const outside = requested.filter((s) => !allowed.has(s));
  if (outside.length > 0)
    throw new ApiError('forbidden', `this key is limited to sources ${[...allowed].join(', ')}`);
  return new Set(requested);
}

export function registerStreamRoute(app: FastifyInstance, deps: StreamRouteDeps): void {
  app.get('/api/v1/unified/stream', async (req, reply) => {
    const request = parseStreamRequest(req.query, req.headers['last-event-id']);
    const principal = await deps.guard.admit({
      surface: 'unified',
      region: deps.region,
      headers: req.headers,
      query: req.query as Record<string, unknown>,
      requestId: req.id,
      clientIp: req.ip,
      capability: 'stream:read',
      stream: true,
    });
    let selection: Selection;
    let coins: { known: string[]; unknown: string[] } | null;
    try {
      coins = request.coins ? await resolveCoins(deps, request.coins, viewerOf(principal)) : null;
      if (coins && coins.known.length === 0)
        throw new ApiError('coin_not_found', `not tracked: ${coins.unknown.join(', ')}`);
      selection = {
        coins: coins ? new Set(coins.known) : null,
        eventTypes: request.eventTypes ? new Set(request.eventTypes) : null,
        sources: allowedSources(request.sources, principal.sources),
        viewer: viewerOf(principal),
      };
    } catch (err) {
      principal.release();
      throw err;
    }
    const conn = new SseConnection(
      reply.raw,
      { ...deps.connection, requestId: req.id, selectionKey: selectionKey(selection) },
      deps.registry.flusher,
    );
    for (const c of coins?.unknown ?? [])
      conn.warn('coin_not_found', `coin ${c} is not tracked; the stream goes on for the others`, { coin: c });

    let sub: FeedSubscription;
    try {
      sub = await openFeed(deps, selection, request.lastEventId, conn);
    } catch (err) {
      principal.release();
      req.log.warn({ err: String(err) }, 'cannot position stream');
      throw new ApiError('feed_unavailable', 'market data log unreachable; retry shortly');
    }
    try {
      assertNotRevoked(principal);
    } catch (err) {
      sub.close();
      principal.release();
      throw err;
    }
    const headers = principal.rateLimit ? rateLimitHeaders(principal.rateLimit) : {};
    if (!deps.registry.start(conn, reply, { principal, headers, onClose: () => sub.close() })) return;
    for (const c of selection.coins ?? deps.tail.health.coins())
      if (deps.tail.health.isStale(c)) conn.feedStale(c, 0);
  });
}
