/** The unified SSE edge of one region: its live tail and its listener. */

import type { Guard } from '../gateways/core/guard.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { tlsOptions } from '../platform/tls.ts';

export type Region = 'us' | 'jp';

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
