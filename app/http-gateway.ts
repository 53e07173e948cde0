/** `{base_url}`: simulation, MCP, console and the dashboard proxy, with the accounts service. */
import { AccountsProjector, openAccountBuckets } from '../consumers/accounts/projector.ts';
import type { Guard } from '../gateways/core/guard.ts';
import { buildHttpApp } from '../gateways/http/app.ts';
import { type Config, selfServicePlans } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { tlsOptions } from '../platform/tls.ts';
import { AccountsService } from '../producers/accounts/service.ts';
import { ensureDemoKey } from './demo-account.ts';
import { secretsOf } from './edge-guard.ts';
import { startServiceKey } from './service-key.ts';
import type { EdgeStatus } from './status-parts.ts';

export async function startHttpGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  edge: { guard: Guard; status: EdgeStatus },
  unifiedUpstream: () => string = () =>
    config.UNIFIED_UPSTREAM_URL ?? `http://127.0.0.1:${config.UNIFIED_PORT_US}`,
): Promise<Stoppable> {
  const projector = await AccountsProjector.start(nats, log);
  const buckets = await openAccountBuckets(nats);
  const secrets = secretsOf(config);
  const accounts = new AccountsService({
    nats,
    projector,
    buckets,
    secrets,
    sessionTtlMs: config.SESSION_TTL_S * 1_000,
    projectionDeadlineMs: config.ACCOUNT_PROJECTION_DEADLINE_MS,
    selfServicePlans: selfServicePlans(config),
    adminKeyMaxTtlMs: config.ADMIN_KEY_MAX_TTL_S * 1_000,
    log,
  });
  const service = startServiceKey(accounts, projector, log);
  const dashboard = { upstream: unifiedUpstream, serviceKey: service.key };
  const http = await buildHttpApp({
    nats,
    accounts,
    guard: edge.guard,
    status: edge.status,
    config,
    log,
    tls: await tlsOptions(config),
    dashboard,
    projection: () => projector.progress(),
  });
  const address = await http.app.listen({ host: config.HOST, port: config.HTTP_PORT });
  http.setListenAddress(address);
  log.info({ url: address }, 'http (console) listening');
  if (config.NODE_ENV === 'development') {
    await projector.caughtUp();
    await ensureDemoKey(config.DATA_DIR, accounts, buckets, secrets);
  }
  return {
    name: 'gateway-http',
    async stop() {
      await http.shutdown();
      await service.revoke().catch((err) => log.warn({ err: String(err) }, 'service key not revoked'));
      projector.stop();
    },
  };
}
