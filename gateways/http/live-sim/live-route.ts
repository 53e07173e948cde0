/**
 * `GET /stream/live?symbol=&seed=` (scope `stream`): unnamed `data:` messages, each a trade or book
 * event of the live synthetic session (symbol, seed); `id:` is the SIM stream sequence. A key
 * revoked while the session was being joined is refused (401) before the first byte.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { SymbolName } from '../../../contracts/events.ts';
import type { ConnectionRegistry } from '../../core/connection-registry.ts';
import { assertNotRevoked } from '../../core/guard.ts';
import { SseConnection, type SseConnectionOptions } from '../../core/sse-connection.ts';
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
    const { symbol, seed } = parseWith(LiveQuery, req.query ?? {}, 'text');
    const conn = new SseConnection(
      reply.raw,
      { ...deps.connection, requestId: req.id },
      deps.registry.flusher,
    );
    const detach = await deps.sessions.subscribe(symbol, seed, {
      deliver: (ev) => conn.event(ev),
      feedStale: () => {},
      feedRecovered: () => {},
    });
    if (req.principal?.revoked.aborted) {
      detach();
      assertNotRevoked(req.principal);
    }
    deps.registry.start(conn, reply, {
      principal: req.principal,
      headers: reply.getHeaders() as Record<string, string>,
      onClose: detach,
    });
  });
}
