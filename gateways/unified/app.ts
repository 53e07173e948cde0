/**
 * The unified-stream gateway as a fastify app built from its dependencies (tests `inject()` or
 * listen on port 0). One LiveTail per process feeds every connection.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import { acceptProxyProtocol, TrustedProxies } from '../core/client-address.ts';
import { ConnectionRegistry } from '../core/connection-registry.ts';
import type { Guard } from '../core/guard.ts';
import { registerHealthRoute } from '../core/health-route.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import type { LiveTail } from '../core/live-tail.ts';
import { registerStreamRoute } from './stream-route.ts';
import { registerTardisRoutes } from './tardis/routes.ts';

export type UnifiedAppDeps = {
  config: Config;
  nats: Nats;
  tail: LiveTail;
  guard: Guard;
  log: Logger;
  region: 'us' | 'jp';
  onEventWritten?: (latencyNs: number) => void;
  tls?: TlsOptions | null;
};

export type UnifiedApp = {
  app: FastifyInstance;
  registry: ConnectionRegistry;
  /** Terminal `reconnect` to every client, then the listener closes. */
  shutdown(): Promise<void>;
};

export function buildUnifiedApp(deps: UnifiedAppDeps): UnifiedApp {
  const { config } = deps;
  const app = createHttpApp(
    {
      loggerInstance: deps.log.child({ surface: 'unified', region: deps.region }),
      forceCloseConnections: true,
    },
    `unified-${deps.region}`,
    deps.tls ?? null,
    { bodyMs: config.HTTP_BODY_TIMEOUT_MS, handlerMs: config.HTTP_HANDLER_TIMEOUT_MS },
  );
  acceptProxyProtocol(app.server, new TrustedProxies(config.TRUSTED_PROXIES));
  const registry = new ConnectionRegistry(config.SSE_HEARTBEAT_MS, `unified-${deps.region}`, {
    nats: deps.nats,
    afterMs: config.NATS_LOST_CLOSE_MS,
  });
  registerHealthRoute(app, deps.nats);
  registerStreamRoute(app, {
    ...deps,
    registry,
    connection: {
      retryMs: config.SSE_RETRY_MS,
      maxBacklogBytes: config.SSE_MAX_BACKLOG_BYTES,
      closeGraceMs: config.SSE_CLOSE_GRACE_MS,
      ...(deps.onEventWritten ? { onEventWritten: deps.onEventWritten } : {}),
    },
  });
  // tardis-machine's replay and stream endpoints over the same core (gateways/unified/tardis/).
  const tardis = registerTardisRoutes(app, {
    ...deps,
    registry,
    sink: { maxBacklogBytes: config.SSE_MAX_BACKLOG_BYTES, closeGraceMs: config.SSE_CLOSE_GRACE_MS },
  });
  return {
    app,
    registry,
    async shutdown() {
      tardis.close();
      registry.closeAll('server shutting down; reconnect with Last-Event-ID');
      await new Promise((r) => setTimeout(r, 100));
      await app.close();
    },
  };
}
