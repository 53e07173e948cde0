/**
 * `GET /stream/live?symbol=&seed=` (scope `stream`): unnamed `data:` messages, each a trade or book
 * event of the live synthetic session (symbol, seed); `id:` is the SIM stream sequence, and a
 * client resumes with `Last-Event-ID` (or `last_event_id`) exactly after the last event it read,
 * through the core's replay loop like every stream. A key revoked while the session was being
 * joined is refused (401) before the first byte. Each stream counts in the key's concurrent-stream
 * cap (the guard); the sessions an account and the process hold are capped (sim-sessions.ts).
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ApiError } from '../../../contracts/errors.ts';
import { SymbolName } from '../../../contracts/events.ts';
import { StreamPositionText } from '../../../contracts/subscription.ts';
import { attachFeed } from '../../core/attach-feed.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import { assertNotRevoked } from '../../core/guard.ts';
import type { FeedSubscription } from '../../core/replay-source.ts';
import { EVERYTHING } from '../../core/selection.ts';
import { SseConnection, type SseConnectionOptions } from '../../core/sse-connection.ts';
import { lastEventIdOf } from '../../core/sse-query.ts';
import { parseWith } from '../../core/validate.ts';
import type { RequireKey } from '../require-key.ts';
import type { SimSessions } from './sim-sessions.ts';

export const LiveQuery = z
  .object({
    symbol: SymbolName,
    seed: z
      .string()
      .regex(/^\d{1,15}$/, 'a non-negative integer')
      .transform(Number)
      .default(42),
    last_event_id: StreamPositionText.optional(),
  })
  .strict();

export type LiveRouteDeps = {
  sessions: SimSessions;
  requireKey: RequireKey;
  registry: ConnectionRegistry;
  connection: Omit<SseConnectionOptions, 'requestId'>;
};

export function registerLiveRoute(app: FastifyInstance, deps: LiveRouteDeps): void {
  app.get('/stream/live', { preHandler: deps.requireKey('stream', { stream: true }) }, async (req, reply) => {
    const q = parseWith(LiveQuery, req.query ?? {}, 'text');
    const lastEventId = lastEventIdOf(req.headers['last-event-id'], q.last_event_id) ?? null;
    const conn = new SseConnection(
      reply.raw,
      { ...deps.connection, requestId: req.id },
      deps.registry.flusher,
    );
    const principal = req.principal;
    const holder = principal?.accountId ?? principal?.keyId ?? 'unknown';
    const hold = await deps.sessions.acquire(q.symbol, q.seed, holder).catch((err) => {
      if (err instanceof ApiError) throw err;
      req.log.warn({ err: String(err) }, 'cannot start live session');
      throw new ApiError('feed_unavailable', 'the live session cannot start now; retry shortly');
    });
    let sub: FeedSubscription;
    try {
      const subscribed = { selection: EVERYTHING, warnings: [], lastEventId, lastOwnSeq: null, window: null };
      sub = (
        await attachFeed(hold.feed, subscribed, conn, {
          what: 'live session stream',
          unavailable: 'the simulation log is unreachable; retry shortly',
        })
      ).feed;
    } catch (err) {
      hold.release();
      throw err;
    }
    const close = () => {
      sub.close();
      hold.release();
    };
    if (req.principal?.revoked.aborted) {
      close();
      assertNotRevoked(req.principal);
    }
    deps.registry.start(conn, {
      takeOver: () => reply.hijack(),
      principal: req.principal,
      headers: reply.getHeaders() as Record<string, string>,
      onClose: close,
    });
  });
}
