/**
 * The `{base_url}` surface (port 8080 locally): console API, dataset generation and artifacts,
 * the live synthetic stream, MCP (tools, discovery, legacy endpoints), caches and metrics. Built
 * from its dependencies so tests can run it against a private nats-server.
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ProjectionProgress } from '../../consumers/accounts/projector.ts';
import { openJobsBucket } from '../../consumers/generation/job-worker.ts';
import { type RetentionSweep, startRetentionSweep } from '../../consumers/generation/retention-sweep.ts';
import { type ArtifactStoreSettings, openArtifactStores } from '../../platform/artifact-store/open.ts';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';
import { metricsRegistry } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { createSecrets } from '../../platform/secrets.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { CacheStore } from '../../producers/caches/cache-store.ts';
import { acceptProxyProtocol, TrustedProxies } from '../core/client-address.ts';
import { ConnectionRegistry } from '../core/connection-registry.ts';
import type { Guard } from '../core/guard.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import { registerCacheRoutes } from './caches/cache-routes.ts';
import { cacheTools } from './caches/cache-tools.ts';
import { registerConsoleRoutes } from './console-routes.ts';
import { consoleSessions } from './console-session.ts';
import { registerConsoleUi } from './console-ui.ts';
import { type DashboardProxyDeps, registerDashboardProxy } from './dashboard-proxy.ts';
import { exportTool, registerExportRoutes } from './export/export-routes.ts';
import { ExportService } from './export/export-service.ts';
import { GenerationService, generationOptions } from './generation/generation-service.ts';
import { registerGenerationRoutes } from './generation/routes.ts';
import { createHealth, registerHealthz } from './health.ts';
import { lastUsedEverywhere } from './key-last-used.ts';
import { registerLiveRoute } from './live-sim/live-route.ts';
import { SimSessions } from './live-sim/sim-sessions.ts';
import { registerMcpRoutes } from './mcp/routes.ts';
import { normalizeTool } from './normalize-tool.ts';
import type { RegisteredRoute } from './openapi/build.ts';
import { collectRoutes, registerOpenApi } from './openapi/serve.ts';
import { installKeyAuth } from './require-key.ts';
import { registerStatusApi, type StatusParts } from './status/status-api.ts';
import { venueTools } from './venue-tools.ts';

export type HttpAppDeps = {
  nats: Nats;
  accounts: AccountsService;
  guard: Guard;
  config: Config;
  log: Logger;
  tls?: TlsOptions | null;
  /** The dashboard proxy `/api/v1/unified/*` (session in, service key out); absent: not served. */
  dashboard?: Omit<DashboardProxyDeps, 'accounts' | 'nats'>;
  /** The process's status parts (app/status-parts.ts): the status API and error log; absent: not served. */
  status?: StatusParts;
  /** The account projection's catch-up, reported by the health answers. */
  projection?: () => ProjectionProgress;
};

export type HttpApp = {
  app: FastifyInstance;
  sessions: SimSessions;
  registry: ConnectionRegistry;
  generation: GenerationService;
  caches: CacheStore;
  /** Every route registered (method, path, OpenAPI doc), as fastify announced them. */
  routes: readonly RegisteredRoute[];
  /** Deletes artifacts and cache exports older than ARTIFACT_RETENTION_S. */
  retention: RetentionSweep;
  /** The address the app answers on, once listening (used in links when PUBLIC_BASE_URL is unset). */
  setListenAddress(url: string): void;
  shutdown(): Promise<void>;
};

export const artifactsDirOf = (config: Config): string =>
  config.ARTIFACTS_DIR ?? join(config.DATA_DIR, 'artifacts');

/** The artifact stores of the configuration (ARTIFACT_STORE, ARTIFACTS_DIR, STREAM_REPLICAS). */
export const artifactStoreSettings = (config: Config): ArtifactStoreSettings => ({
  backend: config.ARTIFACT_STORE,
  localDir: artifactsDirOf(config),
  replicas: config.STREAM_REPLICAS,
  maxBytes: config.ARTIFACT_STORE_MAX_BYTES,
});

export async function buildHttpApp(deps: HttpAppDeps): Promise<HttpApp> {
  const { config, nats } = deps;
  const app = createHttpApp(
    { loggerInstance: deps.log.child({ surface: 'http' }), forceCloseConnections: true },
    'http',
    deps.tls ?? null,
    { bodyMs: config.HTTP_BODY_TIMEOUT_MS, handlerMs: config.HTTP_HANDLER_TIMEOUT_MS },
  );
  acceptProxyProtocol(app.server, new TrustedProxies(config.TRUSTED_PROXIES));
  const documented = collectRoutes(app);
  let listenAddress = `http://127.0.0.1:${config.HTTP_PORT}`;
  const configured = config.PUBLIC_BASE_URL?.replace(/\/$/, '');
  const publicBase = () => configured ?? listenAddress;
  const baseUrl = (req: FastifyRequest) =>
    configured ?? `${req.protocol}://${req.headers.host ?? listenAddress}`;

  const requireKey = installKeyAuth(app, deps.guard);
  const registry = new ConnectionRegistry(config.SSE_HEARTBEAT_MS, 'http');
  const sse = {
    retryMs: config.SSE_RETRY_MS,
    maxBacklogBytes: config.SSE_MAX_BACKLOG_BYTES,
    closeGraceMs: config.SSE_CLOSE_GRACE_MS,
  };
  const jobs = await openJobsBucket(nats);
  const sessions = await SimSessions.start(nats, deps.log, {
    perAccount: config.LIVE_SESSIONS_PER_ACCOUNT,
    perProcess: config.LIVE_SESSIONS_PER_PROCESS,
    leaseTtlMs: config.STREAM_LEASE_TTL_MS,
  });
  const generation = new GenerationService(nats, jobs, generationOptions(config, artifactsDirOf(config)));
  const exports = new ExportService(nats, jobs, generationOptions(config, artifactsDirOf(config)));
  const stores = await openArtifactStores(nats, artifactStoreSettings(config));
  const retention = startRetentionSweep({
    stores: stores.kept,
    maxAgeMs: config.ARTIFACT_RETENTION_S * 1_000,
    intervalMs: config.ARTIFACT_SWEEP_INTERVAL_S * 1_000,
    log: deps.log,
  });
  const caches = await CacheStore.open(nats, {
    maxBytes: config.CACHE_QUOTA_BYTES,
    maxCaches: config.CACHE_QUOTA_COUNT,
    maxAgeMs: config.CACHE_MAX_AGE_S * 1_000,
  });

  const cookies = consoleSessions(
    createSecrets(config.API_KEY_SECRET, config.API_KEY_SECRET_VERSION),
    Boolean(deps.tls) || configured?.startsWith('https:') === true,
    {
      sessionAccount: (token) => deps.accounts.sessionAccount(token),
      ...(deps.status ? { onIdentified: deps.status.accounts.identified } : {}),
    },
  );
  registerConsoleRoutes(
    app,
    deps.accounts,
    await lastUsedEverywhere(nats, config.NATS_REGION_DOMAINS),
    cookies,
  );
  registerConsoleUi(app);
  registerGenerationRoutes(app, {
    service: generation,
    jobs,
    stores,
    requireKey,
    baseUrl,
  });
  registerExportRoutes(app, { service: exports, requireKey, baseUrl });
  registerLiveRoute(app, { sessions, requireKey, registry, connection: sse });
  if (deps.dashboard)
    registerDashboardProxy(app, { ...deps.dashboard, accounts: deps.accounts, nats, sessions: cookies });
  const health = createHealth(nats, deps.projection);
  registerHealthz(app, health);
  registerMcpRoutes(app, {
    requireKey,
    generation,
    health,
    baseUrl: publicBase,
    extraTools: [
      normalizeTool({
        nats,
        caches,
        log: deps.log,
        publish: {
          batchTtlMs: config.OWN_MAX_AGE_S * 1_000,
          quota: { eventsPerDay: config.PUBLISH_EVENTS_PER_DAY, bytesPerDay: config.PUBLISH_BYTES_PER_DAY },
        },
      }),
      ...venueTools(),
      ...cacheTools({ nats, caches }),
      exportTool(exports),
    ],
  });
  registerCacheRoutes(app, {
    nats,
    caches,
    store: stores.primary,
    requireKey,
    registry,
    connection: sse,
  });
  app.get('/metrics', { preHandler: requireKey('metrics') }, async (_req, reply) =>
    reply.type(metricsRegistry.contentType).send(await metricsRegistry.metrics()),
  );
  const detachStatus = deps.status
    ? await registerStatusApi(app, {
        nats,
        log: deps.log,
        accounts: deps.accounts,
        requireKey,
        registry,
        sessions: cookies,
        parts: deps.status,
        deadlineMs: config.ACCOUNT_PROJECTION_DEADLINE_MS,
        staleAfterMs: config.SSE_FEED_STALE_MS,
        regionDomains: config.NATS_REGION_DOMAINS,
      })
    : () => {};
  registerOpenApi(app, documented);

  return {
    app,
    sessions,
    registry,
    generation,
    caches,
    routes: documented,
    retention,
    setListenAddress(url) {
      listenAddress = url;
    },
    async shutdown() {
      detachStatus();
      registry.closeAll('server shutting down; reconnect');
      await retention.stop();
      await generation.close();
      await sessions.stop();
      await app.close();
    },
  };
}
