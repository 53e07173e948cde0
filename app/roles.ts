/**
 * Process roles. `all` (what `npm start` runs) is every role in one process; the others run one
 * role each for scale-out: `gateway unified --region us|jp`, `gateway jsonrpc --region us|jp`,
 * `gateway grpc --region us|jp`, `gateway disksync --region us|jp`, `gateway edges --region us|jp`
 * (the four live-data edges of one region in one process, on one guard and one live tail),
 * `gateway http`, `producer sim`, `producer derived`, `worker`, `producer connector --venue binance|hyperliquid --symbols A,B`.
 * `all` runs the US and JP edges of every transport.
 */
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { type ConnectorArgs, startConnectorProducer } from './connector.ts';
import { startDerivedProducer } from './derived-producer.ts';
import { startDisksyncGateway } from './disksync-gateway.ts';
import type { EdgeStarter, Region } from './edge.ts';
import { startEdgeGuard } from './edge-guard.ts';
import { startGrpcGateway } from './grpc-gateway.ts';
import { startHttpGateway } from './http-gateway.ts';
import { startJsonRpcGateway } from './jsonrpc-gateway.ts';
import { startMetricsListener } from './metrics-listener.ts';
import { startSimProducer } from './sim-producer.ts';
import { setupStreams } from './streams.ts';
import { startUnifiedGateway } from './unified-gateway.ts';
import { startWorker } from './worker.ts';

export type Role =
  | 'all'
  | 'gateway-unified'
  | 'gateway-jsonrpc'
  | 'gateway-grpc'
  | 'gateway-disksync'
  | 'gateway-edges'
  | 'gateway-http'
  | 'producer-sim'
  | 'producer-derived'
  | 'producer-connector'
  | 'worker';
export type { Region, Stoppable };

/**
 * Parts that stop at once, each on its own (the edges: every client told `reconnect` together):
 * one after another, the last edge's clients heard of a Ctrl-C only after every other edge had
 * closed, and on a loaded machine past the shutdown deadline, so never.
 */
const stoppedTogether = (name: string, parts: Stoppable[]): Stoppable => ({
  name,
  stop: async () => {
    const results = await Promise.allSettled(parts.map((p) => p.stop()));
    const failed = results.flatMap((r, i) =>
      r.status === 'rejected' ? [`${parts[i]?.name}: ${r.reason}`] : [],
    );
    if (failed.length > 0) throw new Error(failed.join('; '));
  },
});

/** A process of edges of one region: its guard, the edges, and its own `/metrics` when `METRICS_PORT` is set. */
async function edgesOf(
  starters: EdgeStarter[],
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
): Promise<Stoppable[]> {
  const edge = await startEdgeGuard(nats, config, log);
  const started: Stoppable[] = [];
  for (const start of starters) started.push(await start(nats, config, log, region, edge));
  return [edge.part, stoppedTogether('edges', started), ...(await startMetricsListener(config, log, edge))];
}

export async function startRole(
  role: Role,
  region: Region,
  nats: Nats,
  config: Config,
  log: Logger,
  connector?: ConnectorArgs,
): Promise<Stoppable[]> {
  await setupStreams(nats, config, log);
  switch (role) {
    case 'all': {
      const edge = await startEdgeGuard(nats, config, log);
      let usAddress = '';
      const upstream = () => config.UNIFIED_UPSTREAM_URL ?? usAddress;
      const parts = [
        startSimProducer(nats, config, log),
        startDerivedProducer(nats, log),
        edge.part,
        await startWorker(nats, config, log),
        await startHttpGateway(nats, config, log, edge, upstream),
      ];
      const us = await startUnifiedGateway(nats, config, log, 'us', edge);
      usAddress = us.address;
      const edges = [
        us,
        await startUnifiedGateway(nats, config, log, 'jp', edge),
        await startJsonRpcGateway(nats, config, log, 'us', edge),
        await startJsonRpcGateway(nats, config, log, 'jp', edge),
        await startGrpcGateway(nats, config, log, 'us', edge),
        await startGrpcGateway(nats, config, log, 'jp', edge),
        await startDisksyncGateway(nats, config, log, 'us', edge),
        await startDisksyncGateway(nats, config, log, 'jp', edge),
      ];
      return [...parts, stoppedTogether('edges', edges)];
    }
    case 'gateway-unified':
      return edgesOf([startUnifiedGateway], nats, config, log, region);
    case 'gateway-jsonrpc':
      return edgesOf([startJsonRpcGateway], nats, config, log, region);
    case 'gateway-grpc':
      return edgesOf([startGrpcGateway], nats, config, log, region);
    case 'gateway-disksync':
      return edgesOf([startDisksyncGateway], nats, config, log, region);
    case 'gateway-edges':
      return edgesOf(
        [startUnifiedGateway, startJsonRpcGateway, startGrpcGateway, startDisksyncGateway],
        nats,
        config,
        log,
        region,
      );
    case 'gateway-http': {
      const edge = await startEdgeGuard(nats, config, log);
      return [edge.part, await startHttpGateway(nats, config, log, edge)];
    }
    case 'producer-sim':
      return [startSimProducer(nats, config, log)];
    case 'producer-derived':
      return [startDerivedProducer(nats, log)];
    case 'producer-connector':
      if (!connector) throw new Error('producer connector needs --venue and --symbols');
      return [startConnectorProducer(nats, config, log, connector)];
    case 'worker':
      return [await startWorker(nats, config, log)];
  }
}
