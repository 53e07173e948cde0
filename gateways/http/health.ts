/**
 * The `{base_url}` health answer (MCP `get_health`, `GET /mcp/health`, `GET /healthz`): never
 * throws. It reports the account projection's catch-up (`accounts`: position applied of the
 * stream's end) instead of holding the listener until it is done: the process serves as soon as it
 * starts, and console changes answer 503 `account_update_pending` until their event is projected.
 */
import type { FastifyInstance } from 'fastify';
import type { ProjectionProgress } from '../../consumers/accounts/projector.ts';
import { SERVICE_VERSION } from '../../contracts/mcp-tools.ts';
import type { Nats } from '../../platform/nats.ts';
import { healthy } from '../core/health-route.ts';
import type { HealthPort } from './ports.ts';

export function createHealth(
  nats: Nats,
  projection?: () => ProjectionProgress,
  startedAt = Date.now(),
): HealthPort {
  return {
    async health() {
      const ok = await healthy(nats);
      return {
        status: ok ? 'ok' : 'degraded',
        version: SERVICE_VERSION,
        nats: nats.connected() ? 'connected' : 'disconnected',
        streams: ok ? 'ready' : 'unavailable',
        uptime_seconds: Math.round((Date.now() - startedAt) / 1_000),
        ...(projection ? { accounts: projection() } : {}),
      };
    },
  };
}

/** `GET /healthz`: 200 with the health answer while NATS and the streams answer, 503 otherwise. */
export function registerHealthz(app: FastifyInstance, port: HealthPort): void {
  const openapi = {
    summary:
      "The process's health: NATS, the streams, and the account projection's catch-up (503 while degraded)",
    tag: 'health',
    auth: 'none',
    errors: [],
  } as const;
  app.get('/healthz', { config: { openapi } }, async (_req, reply) => {
    const answer = await port.health();
    if (answer.status !== 'ok') reply.code(503).header('retry-after', '1');
    return reply.send(answer);
  });
}
