/** The gRPC edge of one region: the latest-state view and price.PriceService on the process's shared live tail. */

import type { Guard } from '../gateways/core/guard.ts';
import { LatestState } from '../gateways/core/latest-state.ts';
import { buildGrpcApp } from '../gateways/grpc/app.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStatus } from './edge-status.ts';
import { acquireTail } from './shared-tail.ts';
import type { Region } from './unified-gateway.ts';

export async function startGrpcGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
  edge: { guard: Guard; status: EdgeStatus },
): Promise<Stoppable & { address: string }> {
  const { tail, release } = await acquireTail(nats, config, log);
  const latest = await LatestState.start(nats, tail, log);
  const tls = await tlsOptions(config);
  const grpc = buildGrpcApp({
    config,
    nats,
    tail,
    latest,
    guard: edge.guard,
    log: log.child({ surface: 'grpc', region }),
    region,
    tls,
    maintenance: edge.status.maintenance,
    errors: { recorder: edge.status.errors, accounts: edge.status.accounts },
  });
  const port = await grpc.listen(config.HOST, region === 'us' ? config.GRPC_PORT_US : config.GRPC_PORT_JP);
  const address = `${tls ? 'grpcs' : 'grpc'}://${config.HOST}:${port}`;
  log.info({ region, url: address, port }, 'grpc listening');
  return {
    address,
    name: `grpc-${region}`,
    async stop() {
      await grpc.shutdown();
      latest.stop();
      release();
    },
  };
}
