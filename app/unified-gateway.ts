/** The unified SSE edge of one region: its listener, on the process's shared live tail. */

import { attachEdgeStatus } from '../gateways/core/edge-status.ts';
import type { Guard } from '../gateways/core/guard.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStatus } from './edge-status.ts';
import { acquireTail } from './shared-tail.ts';

export type Region = 'us' | 'jp';

export async function startUnifiedGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
  edge: { guard: Guard; status: EdgeStatus },
): Promise<Stoppable & { address: string }> {
  const { tail, release } = await acquireTail(nats, config, log);
  const unified = buildUnifiedApp({
    config,
    nats,
    tail,
    guard: edge.guard,
    log,
    region,
    tls: await tlsOptions(config),
  });
  const detachStatus = attachEdgeStatus(unified.app, edge.status, {
    region,
    transport: 'unified',
    registry: unified.registry,
  });
  const port = region === 'us' ? config.UNIFIED_PORT_US : config.UNIFIED_PORT_JP;
  const address = await unified.app.listen({ host: config.HOST, port });
  log.info({ region, url: `${address}/api/v1/unified/stream` }, 'unified stream listening');
  return {
    address,
    name: `unified-${region}`,
    async stop() {
      detachStatus();
      await unified.shutdown();
      release();
    },
  };
}
