/** The gRPC edge of one region: the latest-state view and price.PriceService on the process's shared live tail. */

import { LatestState } from '../gateways/core/latest-state.ts';
import { buildGrpcApp } from '../gateways/grpc/app.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStarter } from './edge.ts';
import { acquireTail } from './shared-tail.ts';

export const startGrpcGateway: EdgeStarter = async (nats, config, log, region, edge) => {
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
};
