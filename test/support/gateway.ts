/** Runs a real unified gateway in this process against a given NATS URL, listening on a free port. */
import { randomBytes } from 'node:crypto';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { setupStreams } from '../../app/streams.ts';
import { type Guard, openGuard } from '../../gateways/core/guard.ts';
import type { KeyStore } from '../../gateways/core/key-store.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildUnifiedApp, type UnifiedApp } from '../../gateways/unified/app.ts';
import { type Config, loadConfig } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';

export type TestGateway = {
  url: string;
  nats: Nats;
  tail: LiveTail;
  unified: UnifiedApp;
  config: Config;
  /** The real guard's key store (`guard: 'keys'`), else null. */
  keys: KeyStore | null;
  close(): Promise<void>;
};

/** One random HMAC secret per test process: outside development the default secret is refused. */
const TEST_SECRET = `test-secret-${randomBytes(16).toString('hex')}`;

export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    API_KEY_SECRET: TEST_SECRET,
    // A test's own accounts (keys made as fixtures) wait for the projection in the test's process,
    // which three test files and their services share two cores with: 5 s (the service's default)
    // was once not enough in a fresh clone (run 24, disksync-edge). Tests of the deadline set theirs.
    ACCOUNT_PROJECTION_DEADLINE_MS: '30000',
    ...env,
  });
}

/** A NATS connection with every stream set up. */
export async function connectTestNats(natsUrl: string, config: Config): Promise<Nats> {
  const nats = await connectNats(natsUrl, 'test', createLogger(config.LOG_LEVEL, 'test'));
  await setupStreams(nats, config);
  return nats;
}

/**
 * `guard: 'open'` (default) admits every request: for tests of streaming mechanics. `'keys'` runs
 * the real API-key guard (key store + shared rate limiter) as the service does.
 */
export async function startTestGateway(
  natsUrl: string,
  env: Record<string, string> = {},
  opts: { guard?: 'open' | 'keys'; region?: 'us' | 'jp' } = {},
): Promise<TestGateway> {
  const config = testConfig(env);
  const log = createLogger(config.LOG_LEVEL, 'gateway');
  const nats = await connectTestNats(natsUrl, config);
  let guard: Guard = openGuard;
  let stopGuard = async () => {};
  let keys: KeyStore | null = null;
  if (opts.guard === 'keys') {
    const edge = await startEdgeGuard(nats, config, log);
    guard = edge.guard;
    keys = edge.keys;
    stopGuard = () => edge.part.stop();
  }
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const unified = buildUnifiedApp({ config, nats, tail, guard, log, region: opts.region ?? 'us' });
  const address = await unified.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address,
    nats,
    tail,
    unified,
    config,
    keys,
    async close() {
      await unified.shutdown();
      tail.stop();
      await stopGuard();
      await nats.nc.close();
    },
  };
}
