/**
 * `GET /metrics` (Prometheus text) behind the guard with the `metrics` scope, as on `{base_url}`:
 * the same key a scraper uses for the `{base_url}` replicas reads every other process too.
 */
import type { FastifyInstance } from 'fastify';
import { metricsRegistry } from '../../platform/metrics.ts';
import { clientAddress } from './client-address.ts';
import type { Guard } from './guard.ts';

export function registerMetricsRoute(app: FastifyInstance, guard: Guard): void {
  app.get('/metrics', async (req, reply) => {
    const principal = await guard.admit({
      surface: 'simulation',
      region: null,
      headers: req.headers,
      query: (req.query ?? {}) as Record<string, unknown>,
      requestId: req.id,
      clientIp: clientAddress(req.socket, req.headers),
      capability: 'metrics',
      stream: false,
    });
    try {
      return reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics());
    } finally {
      principal.release();
    }
  });
}
