/** The `{base_url}` health answer (MCP `get_health`, `GET /mcp/health`): never throws. */
import { SERVICE_VERSION } from '../../contracts/mcp-tools.ts';
import type { Nats } from '../../platform/nats.ts';
import { healthy } from '../core/health-route.ts';
import type { HealthPort } from './ports.ts';

export function createHealth(nats: Nats, startedAt = Date.now()): HealthPort {
  return {
    async health() {
      const ok = await healthy(nats);
      return {
        status: ok ? 'ok' : 'degraded',
        version: SERVICE_VERSION,
        nats: nats.connected() ? 'connected' : 'disconnected',
        streams: ok ? 'ready' : 'unavailable',
        uptime_seconds: Math.round((Date.now() - startedAt) / 1_000),
      };
    },
  };
}
