/** Runs a real unified gateway in this process against a given NATS URL, listening on a free port. */
import { STREAMS, streamDefinitions } from '../../contracts/streams.ts';
import { openGuard } from '../../gateways/core/guard.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildUnifiedApp, type UnifiedApp } from '../../gateways/unified/app.ts';
import { type Config, loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, ensureStreams, type Nats } from '../../platform/nats.ts';

export type TestGateway = {
  url: string;
  nats: Nats;
  tail: LiveTail;
  unified: UnifiedApp;
  config: Config;
  close(): Promise<void>;
};

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...env });
}

export async function setupStreams(natsUrl: string, config: Config): Promise<Nats> {
  const log = createLogger(config.LOG_LEVEL, 'test');
  const nats = await connectNats(natsUrl, 'test-setup', log);
  await ensureStreams(
    nats.jsm,
    streamDefinitions({
      mdMaxAgeSeconds: config.MD_MAX_AGE_S,
      mdMaxMsgs: config.MD_MAX_MSGS,
      mdMaxBytes: config.MD_MAX_BYTES,
    }),
  );
  return nats;
}

export async function startTestGateway(
  natsUrl: string,
  env: Record<string, string> = {},
): Promise<TestGateway> {
  const config = testConfig(env);
  const log = createLogger(config.LOG_LEVEL, 'gateway');
  const nats = await setupStreams(natsUrl, config);
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const unified = buildUnifiedApp({ config, nats, tail, guard: openGuard, log, region: 'us' });
  const address = await unified.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    nats,
    tail,
    unified,
    config,
    async close() {
      await unified.shutdown();
      tail.stop();
      await nats.nc.close();
    },
  };
}

export { STREAMS };
