/** The real `{base_url}` app (console, live stream, …) with the real guard, on a free port. */

import { startEdgeGuard } from '../../app/edge-guard.ts';
import { buildHttpApp, type HttpApp, type HttpAppDeps } from '../../gateways/http/app.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from './accounts.ts';

export type TestHttp = HttpApp & { url: string; close(): Promise<void> };

export async function startTestHttp(
  nats: Nats,
  config: Config,
  accounts: TestAccounts,
  dashboard?: HttpAppDeps['dashboard'],
  opts: { status?: boolean } = {},
): Promise<TestHttp> {
  const log = createLogger(config.LOG_LEVEL, 'http');
  const edge = await startEdgeGuard(nats, config, log);
  const http = await buildHttpApp({
    nats,
    accounts: accounts.service,
    guard: edge.guard,
    config,
    log,
    ...(dashboard ? { dashboard } : {}),
    ...(opts.status ? { status: edge.status } : {}),
  });
  const url = await http.app.listen({ host: '127.0.0.1', port: 0 });
  http.setListenAddress(url);
  return {
    ...http,
    url,
    async close() {
      await http.shutdown();
      await edge.part.stop();
    },
  };
}
