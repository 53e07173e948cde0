import { join } from 'node:path';
/**
 * Process roles. `all` (what `npm start` runs) is every role in one process; the others run one
 * role each for scale-out: `gateway unified --region us|jp`, `gateway http`, `producer sim`, `worker`.
 */
import { AccountsProjector, openAccountBuckets } from '../consumers/accounts/projector.ts';
import { type JobWorker, startJobWorker } from '../consumers/generation/job-worker.ts';
import { streamDefinitions } from '../contracts/streams.ts';
import { createApiKeyGuard } from '../gateways/core/api-key-guard.ts';
import type { Guard } from '../gateways/core/guard.ts';
import { KeyStore } from '../gateways/core/key-store.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { createRateLimiter } from '../gateways/core/rate-limit/rate-limiter.ts';
import { artifactsDirOf, buildHttpApp } from '../gateways/http/app.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import { AccountsService } from '../producers/accounts/service.ts';
import { startLiveRunner } from '../producers/simulator/live-runner.ts';
import { type Config, previousSecrets, selfServicePlans } from './config.ts';
import { ensureDemoKey } from './demo-account.ts';
import type { Stoppable } from './lifecycle.ts';
import type { Logger } from './logger.ts';
import { ensureStreams, type Nats } from './nats.ts';
import { createSecrets } from './secrets.ts';
import { createServiceKey } from './service-key.ts';
import { tlsOptions } from './tls.ts';

export type Role = 'all' | 'gateway-unified' | 'gateway-http' | 'producer-sim' | 'worker';
export type Region = 'us' | 'jp';

export type { Stoppable };

export async function setupStreams(nats: Nats, config: Config): Promise<void> {
  await ensureStreams(
    nats.jsm,
    streamDefinitions({
      mdMaxAgeSeconds: config.MD_MAX_AGE_S,
      mdMaxMsgs: config.MD_MAX_MSGS,
      mdMaxBytes: config.MD_MAX_BYTES,
      replicas: config.STREAM_REPLICAS,
    }),
  );
}

const secretsOf = (config: Config) =>
  createSecrets(config.API_KEY_SECRET, config.API_KEY_SECRET_VERSION, previousSecrets(config));

/** The guard of one process, shared by all its edge surfaces. */
export async function startEdgeGuard(
  nats: Nats,
  config: Config,
  log: Logger,
): Promise<{ guard: Guard; part: Stoppable }> {
  const keys = await KeyStore.start(nats, secretsOf(config), log);
  const limiter = await createRateLimiter(nats);
  const guard = createApiKeyGuard({ keys, limiter });
  const stop = async () => {
    await keys.stop();
    await limiter.close();
  };
  return { guard, part: { name: 'edge-guard', stop } };
}

export async function startUnifiedGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
  guard: Guard,
): Promise<Stoppable & { address: string }> {
  const tail = await LiveTail.start(nats, log, {
    name: `unified-${region}`,
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const unified = buildUnifiedApp({ config, nats, tail, guard, log, region, tls: await tlsOptions(config) });
  const port = region === 'us' ? config.UNIFIED_PORT_US : config.UNIFIED_PORT_JP;
  const address = await unified.app.listen({ host: config.HOST, port });
  log.info({ region, url: `${address}/api/v1/unified/stream` }, 'unified stream listening');
  return {
    address,
    name: `unified-${region}`,
    async stop() {
      await unified.shutdown();
      tail.stop();
    },
  };
}

export async function startHttpGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  guard: Guard,
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
    operatorEmails: config.OPERATOR_EMAILS,
    log,
  });
  const service = await createServiceKey(accounts);
  const dashboard = { upstream: unifiedUpstream, serviceKey: () => service.key };
  const http = await buildHttpApp({
    nats,
    accounts,
    guard,
    config,
    log,
    tls: await tlsOptions(config),
    dashboard,
  });
  const address = await http.app.listen({ host: config.HOST, port: config.HTTP_PORT });
  http.setListenAddress(address);
  log.info({ url: address }, 'http (console) listening');
  if (config.NODE_ENV === 'development') await ensureDemoKey(config.DATA_DIR, accounts, buckets, secrets);
  return {
    name: 'gateway-http',
    async stop() {
      await http.shutdown();
      await service.revoke().catch((err) => log.warn({ err: String(err) }, 'service key not revoked'));
      projector.stop();
    },
  };
}

export async function startWorker(nats: Nats, config: Config, log: Logger): Promise<Stoppable> {
  const workers: JobWorker[] = [];
  for (let i = 0; i < config.WORKER_CONCURRENCY; i++)
    workers.push(
      await startJobWorker(nats, log, {
        artifactsDir: artifactsDirOf(config),
        tmpDir: join(config.DATA_DIR, 'tmp'),
        ackWaitMs: config.JOB_ACK_WAIT_MS,
        minFreeDiskBytes: config.MIN_FREE_DISK_BYTES,
      }),
    );
  return { name: 'worker', stop: async () => void (await Promise.all(workers.map((w) => w.stop()))) };
}

export function startSimProducer(nats: Nats, config: Config, log: Logger): Stoppable {
  const runner = startLiveRunner(
    nats,
    {
      coins: config.COINS,
      seed: config.SIM_SEED,
      tradeRate: config.SIM_TRADE_RATE,
      bookIntervalMs: config.SIM_BOOK_INTERVAL_MS,
    },
    log,
  );
  return { name: 'producer-sim', stop: () => runner.stop() };
}

export async function startRole(
  role: Role,
  region: Region,
  nats: Nats,
  config: Config,
  log: Logger,
): Promise<Stoppable[]> {
  await setupStreams(nats, config);
  switch (role) {
    case 'all': {
      const edge = await startEdgeGuard(nats, config, log);
      let usAddress = '';
      const upstream = () => config.UNIFIED_UPSTREAM_URL ?? usAddress;
      const parts = [
        startSimProducer(nats, config, log),
        edge.part,
        await startWorker(nats, config, log),
        await startHttpGateway(nats, config, log, edge.guard, upstream),
      ];
      const us = await startUnifiedGateway(nats, config, log, 'us', edge.guard);
      usAddress = us.address;
      return [...parts, us, await startUnifiedGateway(nats, config, log, 'jp', edge.guard)];
    }
    case 'gateway-unified': {
      const edge = await startEdgeGuard(nats, config, log);
      return [edge.part, await startUnifiedGateway(nats, config, log, region, edge.guard)];
    }
    case 'gateway-http': {
      const edge = await startEdgeGuard(nats, config, log);
      return [edge.part, await startHttpGateway(nats, config, log, edge.guard)];
    }
    case 'producer-sim':
      return [startSimProducer(nats, config, log)];
    case 'worker':
      return [await startWorker(nats, config, log)];
  }
}
