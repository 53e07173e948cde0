/**
 * The JSON-RPC feed edge of one region as a fastify app built from its dependencies (tests
 * `inject()` or listen on port 0): `POST /` (rpc-route.ts) and `GET /healthz`. Every error of the
 * whole request, fastify's own included (413, 405 with `Allow: POST`, 404), answers its real HTTP
 * status with a JSON-RPC error body, `x-request-id` and, where the row says so, `Retry-After`.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../platform/config.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import { acceptProxyProtocol, TrustedProxies } from '../core/client-address.ts';
import type { Guard } from '../core/guard.ts';
import { registerHealthRoute } from '../core/health-route.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import { requestFailureBody } from '../core/jsonrpc-envelope.ts';
import type { LatestState } from '../core/latest-state.ts';
import type { LiveTail } from '../core/live-tail.ts';
import { regionCopyHeaders } from '../core/region-copy.ts';
import type { JsonRpcSettings } from './context.ts';
import type { FilterStore } from './filter-store.ts';
import { createMethods } from './methods/index.ts';
import { registerRpcRoute } from './rpc-route.ts';

export type JsonRpcAppDeps = {
  config: Config;
  nats: Nats;
  tail: LiveTail;
  latest: LatestState;
  filters: FilterStore;
  guard: Guard;
  log: Logger;
  region: 'us' | 'jp';
  tls?: TlsOptions | null;
};

export type JsonRpcApp = { app: FastifyInstance; shutdown(): Promise<void> };

/** The edge's settings from the configuration. */
export function jsonRpcSettings(config: Config): JsonRpcSettings {
  return {
    chainId: config.JSONRPC_CHAIN_ID,
    retentionMs: config.MD_MAX_AGE_S * 1_000,
    tradesMaxRangeMs: config.JSONRPC_TRADES_MAX_RANGE_MS,
    tradesSkewMs: config.JSONRPC_TRADES_SKEW_MS,
    filterMaxEvents: config.JSONRPC_FILTER_MAX_EVENTS,
    callTimeoutMs: config.JSONRPC_CALL_TIMEOUT_MS,
  };
}

export function buildJsonRpcApp(deps: JsonRpcAppDeps): JsonRpcApp {
  const { config } = deps;
  const settings = jsonRpcSettings(config);
  const app = createHttpApp(
    { loggerInstance: deps.log.child({ surface: 'jsonrpc', region: deps.region }) },
    `jsonrpc-${deps.region}`,
    deps.tls ?? null,
    { bodyMs: config.HTTP_BODY_TIMEOUT_MS, handlerMs: config.HTTP_HANDLER_TIMEOUT_MS },
    requestFailureBody,
  );
  acceptProxyProtocol(app.server, new TrustedProxies(config.TRUSTED_PROXIES));
  registerHealthRoute(app, deps.nats);
  registerRpcRoute(app, {
    guard: deps.guard,
    region: deps.region,
    methods: createMethods({ ...deps, settings }),
    callTimeoutMs: settings.callTimeoutMs,
    log: deps.log,
    ...(deps.nats.home ? { regionHeaders: () => regionCopyHeaders(deps.nats) } : {}),
  });
  return { app, shutdown: () => app.close() };
}
