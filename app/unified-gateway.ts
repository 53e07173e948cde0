/** The unified SSE edge of one region: its listener, on the process's shared live tail. */

import { attachEdgeStatus } from '../gateways/core/status-hooks.ts';
import { buildUnifiedApp } from '../gateways/unified/app.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStarter } from './edge.ts';
import { acquireTail } from './shared-tail.ts';

export const startUnifiedGateway: EdgeStarter = async (nats, config, log, region, edge) => {
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
};
