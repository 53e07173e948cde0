/**
 * A role process's own `/metrics` on `METRICS_PORT` (TLS like every listener), for processes that
 * do not serve `{base_url}`: each edge replica and its open streams, tails and lag are scraped
 * where they live. `npm start` and `gateway http` serve `/metrics` on `{base_url}` instead.
 */

import { acceptProxyProtocol, TrustedProxies } from '../gateways/core/client-address.ts';
import { createHttpApp } from '../gateways/core/http-hygiene.ts';
import { registerMetricsRoute } from '../gateways/core/metrics-route.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeParts } from './edge.ts';

/** Nothing when `METRICS_PORT` is unset. */
export async function startMetricsListener(
  config: Config,
  log: Logger,
  edge: EdgeParts,
): Promise<Stoppable[]> {
  if (config.METRICS_PORT === undefined) return [];
  const app = createHttpApp(
    { loggerInstance: log.child({ surface: 'metrics' }) },
    'metrics',
    await tlsOptions(config),
    { bodyMs: config.HTTP_BODY_TIMEOUT_MS, handlerMs: config.HTTP_HANDLER_TIMEOUT_MS },
  );
  acceptProxyProtocol(app.server, new TrustedProxies(config.TRUSTED_PROXIES));
  registerMetricsRoute(app, edge.guard);
  const address = await app.listen({ host: config.HOST, port: config.METRICS_PORT });
  log.info({ url: `${address}/metrics` }, 'metrics listening');
  return [{ name: 'metrics', stop: () => app.close() }];
}
