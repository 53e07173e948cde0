/**
 * The `{base_url}` surface (port 8080 locally): console API now; simulation, MCP, legacy and
 * metrics routes join it with the next issues.
 */
import type { FastifyInstance } from 'fastify';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { BUCKET_OPTIONS, openBucket } from '../../platform/kv.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { createHttpApp } from '../core/http-hygiene.ts';
import { registerConsoleRoutes } from './console-routes.ts';

export type HttpAppDeps = { nats: Nats; accounts: AccountsService; log: Logger };

export async function buildHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const app = createHttpApp({ loggerInstance: deps.log.child({ surface: 'http' }) });
  const usage = await openBucket<number>(deps.nats, KV_BUCKETS.keyUsage, BUCKET_OPTIONS[KV_BUCKETS.keyUsage]);
  registerConsoleRoutes(app, deps.accounts, usage);
  return app;
}
