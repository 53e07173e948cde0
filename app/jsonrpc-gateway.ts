/** The JSON-RPC edge of one region: the latest-state view, the filter store and its listener, on the process's shared live tail. */

import { LatestState } from '../gateways/core/latest-state.ts';
import { attachEdgeStatus } from '../gateways/core/status-hooks.ts';
import { buildJsonRpcApp } from '../gateways/jsonrpc/app.ts';
import { FilterStore } from '../gateways/jsonrpc/filter-store.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStarter } from './edge.ts';
import { acquireTail } from './shared-tail.ts';

export const startJsonRpcGateway: EdgeStarter = async (nats, config, log, region, edge) => {
  const { tail, release } = await acquireTail(nats, config, log);
  const latest = await LatestState.start(nats, tail, log);
  const filters = await FilterStore.open(nats, config.JSONRPC_FILTER_TTL_S * 1_000);
  const rpc = buildJsonRpcApp({
    config,
    nats,
    tail,
    latest,
    filters,
    guard: edge.guard,
    log,
    region,
    tls: await tlsOptions(config),
  });
  const detachStatus = attachEdgeStatus(rpc.app, edge.status, { region, transport: 'jsonrpc' });
  const port = region === 'us' ? config.JSONRPC_PORT_US : config.JSONRPC_PORT_JP;
  const address = await rpc.app.listen({ host: config.HOST, port });
  log.info({ region, url: address }, 'json-rpc listening');
  return {
    address,
    name: `jsonrpc-${region}`,
    async stop() {
      detachStatus();
      await rpc.shutdown();
      latest.stop();
      release();
    },
  };
};
