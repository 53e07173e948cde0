/**
 * Process roles. `all` (what `npm start` runs) is every role in one process; the others run one
 * role each for scale-out: `gateway unified --region us|jp`, `producer sim`.
 */
import { streamDefinitions } from '../contracts/streams.ts';
import { openGuard } from '../gateways/core/guard.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import { startLiveRunner } from '../producers/simulator/live-runner.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import { ensureStreams, type Nats } from './nats.ts';

export type Role = 'all' | 'gateway-unified' | 'producer-sim';
export type Region = 'us' | 'jp';

/** Something that runs until stopped; stopped in reverse start order. */
export type Stoppable = { name: string; stop(): Promise<void> };

export async function setupStreams(nats: Nats, config: Config): Promise<void> {
  await ensureStreams(
    nats.jsm,
    streamDefinitions({
      mdMaxAgeSeconds: config.MD_MAX_AGE_S,
      mdMaxMsgs: config.MD_MAX_MSGS,
      mdMaxBytes: config.MD_MAX_BYTES,
    }),
  );
}

export async function startUnifiedGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
): Promise<Stoppable> {
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const unified = buildUnifiedApp({ config, nats, tail, guard: openGuard, log, region });
  const port = region === 'us' ? config.UNIFIED_PORT_US : config.UNIFIED_PORT_JP;
  const address = await unified.app.listen({ host: config.HOST, port });
  log.info({ region, url: `${address}/api/v1/unified/stream` }, 'unified stream listening');
  return {
    name: `unified-${region}`,
    async stop() {
      await unified.shutdown();
      tail.stop();
    },
  };
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
    case 'all':
      return [
        startSimProducer(nats, config, log),
        await startUnifiedGateway(nats, config, log, 'us'),
        await startUnifiedGateway(nats, config, log, 'jp'),
      ];
    case 'gateway-unified':
      return [await startUnifiedGateway(nats, config, log, region)];
    case 'producer-sim':
      return [startSimProducer(nats, config, log)];
  }
}
