/**
 * The real `{base_url}` app with its status API (incidents, maintenance windows) in this process,
 * on a free port: the guard, accounts and status parts wired as `gateway http` wires them.
 */
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { buildHttpApp } from '../../gateways/http/app.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from './accounts.ts';

export type TestStatusApi = { url: string; close(): Promise<void> };

export async function startTestStatusApi(
  nats: Nats,
  config: Config,
  accounts: TestAccounts,
): Promise<TestStatusApi> {
  const log = createLogger(config.LOG_LEVEL, 'http');
  const edge = await startEdgeGuard(nats, config, log);
  const http = await buildHttpApp({
    nats,
    accounts: accounts.service,
    guard: edge.guard,
    status: edge.status,
    config,
    log,
  });
  const url = await http.app.listen({ host: '127.0.0.1', port: 0 });
  http.setListenAddress(url);
  return {
    url,
    async close() {
      await http.shutdown();
      await edge.part.stop();
    },
  };
}
