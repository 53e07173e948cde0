/**
 * The `{base_url}` surface (port 8080 locally): console API, the live synthetic stream, and (with
 * the next parts) generation, MCP, legacy endpoints and metrics. Built from its dependencies so
 * tests can run it against a private nats-server.
 */
import type { FastifyInstance } from 'fastify';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import type { Config } from '../../platform/config.ts';
import { BUCKET_OPTIONS, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { ConnectionRegistry } from '../core/connection-registry.ts';
import type { Guard } from '../core/guard.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import { registerConsoleRoutes } from './console-routes.ts';
import { registerLiveRoute } from './live-sim/live-route.ts';
import { SimSessions } from './live-sim/sim-sessions.ts';
import { installKeyAuth } from './require-key.ts';

export type HttpAppDeps = {
  nats: Nats;
  accounts: AccountsService;
  guard: Guard;
  config: Config;
  log: Logger;
};

export type HttpApp = {
  app: FastifyInstance;
  sessions: SimSessions;
  registry: ConnectionRegistry;
  shutdown(): Promise<void>;
};

export async function buildHttpApp(deps: HttpAppDeps): Promise<HttpApp> {
  const { config } = deps;
  const app = createHttpApp({
    loggerInstance: deps.log.child({ surface: 'http' }),
    forceCloseConnections: true,
  });
  const usage = await openBucket<number>(deps.nats, KV_BUCKETS.keyUsage, BUCKET_OPTIONS[KV_BUCKETS.keyUsage]);
  const requireKey = installKeyAuth(app, deps.guard);
  const registry = new ConnectionRegistry(config.SSE_HEARTBEAT_MS);
  const sessions = await SimSessions.start(deps.nats, deps.log);
  registerConsoleRoutes(app, deps.accounts, usage);
  registerLiveRoute(app, {
    sessions,
    requireKey,
    registry,
    connection: {
      retryMs: config.SSE_RETRY_MS,
      maxBacklogBytes: config.SSE_MAX_BACKLOG_BYTES,
      closeGraceMs: config.SSE_CLOSE_GRACE_MS,
    },
  });
  return {
    app,
    sessions,
    registry,
    async shutdown() {
      registry.closeAll('server shutting down; reconnect');
      await sessions.stop();
      await app.close();
    },
  };
}
