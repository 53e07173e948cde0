/**
 * A gRPC edge built in this process from its parts (the real guard with its status projection,
 * the shared live tail, the latest-state view), as `gateway grpc` builds it, with its
 * ConnectionRegistry in reach so a test can read what the edge holds per stream; and grpc-js
 * clients on a connection of their own (HTTP/2 flow control is per connection as well as per
 * stream: a client that stops reading must not stall another one sharing its connection).
 */
import { type ChannelOptions, credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { acquireTail } from '../../app/shared-tail.ts';
import { LatestState } from '../../gateways/core/latest-state.ts';
import type { Maintenance } from '../../gateways/core/maintenance.ts';
import { buildGrpcApp, type GrpcApp } from '../../gateways/grpc/app.ts';
import { LOADER_OPTIONS, PROTO_PATH } from '../../gateways/grpc/proto.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { PriceClient } from './grpc.ts';

export type InProcessGrpc = {
  target: string;
  app: GrpcApp;
  /** The maintenance windows as this edge's process sees them (projected from the status API). */
  maintenance: Maintenance;
  close(): Promise<void>;
};

export async function startInProcessGrpc(
  nats: Nats,
  config: Config,
  region: 'us' | 'jp' = 'us',
): Promise<InProcessGrpc> {
  const log = createLogger(config.LOG_LEVEL, 'grpc');
  const edge = await startEdgeGuard(nats, config, log);
  const { tail, release } = await acquireTail(nats, config, log);
  const latest = await LatestState.start(nats, tail, log);
  const app = buildGrpcApp({
    config,
    nats,
    tail,
    latest,
    guard: edge.guard,
    log,
    region,
    maintenance: edge.status.maintenance,
  });
  const port = await app.listen('127.0.0.1', 0);
  return {
    target: `127.0.0.1:${port}`,
    app,
    maintenance: edge.status.maintenance,
    async close() {
      await app.shutdown();
      latest.stop();
      release();
      await edge.part.stop();
    },
  };
}

const pkg = loadPackageDefinition(loadSync(PROTO_PATH, LOADER_OPTIONS)) as unknown as {
  price: {
    PriceService: new (
      target: string,
      creds: ReturnType<typeof credentials.createInsecure>,
      options: ChannelOptions,
    ) => PriceClient;
  };
};

/**
 * A price.PriceService client on its own HTTP/2 connection (no subchannel shared with other
 * clients); `options` adds channel options (e.g. `grpc-node.flow_control_window`).
 */
export const ownConnectionClient = (target: string, options: ChannelOptions = {}): PriceClient =>
  new pkg.price.PriceService(target, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    ...options,
  });
