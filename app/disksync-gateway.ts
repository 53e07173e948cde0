/** The disk-sync WebSocket edge of one region, on the process's shared live tail and guard. */

import { attachEdgeStatus } from '../gateways/core/status-hooks.ts';
import { buildDisksyncApp, disksyncSettings } from '../gateways/disksync/app.ts';
import { KeyLeases } from '../gateways/disksync/lease.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStarter } from './edge.ts';
import { acquireTail } from './shared-tail.ts';

export const startDisksyncGateway: EdgeStarter = async (nats, config, log, region, edge) => {
  const { tail, release } = await acquireTail(nats, config, log);
  const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
  const tls = await tlsOptions(config);
  const edgeLog = log.child({ surface: 'disksync', region });
  const ws = buildDisksyncApp({
    nats,
    tail,
    guard: edge.guard,
    leases,
    log: edgeLog,
    region,
    tls,
    settings: disksyncSettings(config),
    errors: { recorder: edge.status.errors, accounts: edge.status.accounts },
  });
  const detachStatus = attachEdgeStatus(ws.app, edge.status, {
    region,
    transport: 'disksync',
    registry: ws.registry,
  });
  const port = region === 'us' ? config.DISKSYNC_PORT_US : config.DISKSYNC_PORT_JP;
  const http = await ws.app.listen({ host: config.HOST, port });
  const address = http.replace(/^http/, 'ws');
  log.info({ region, url: address }, 'disksync listening');
  return {
    address,
    name: `disksync-${region}`,
    async stop() {
      detachStatus();
      await ws.shutdown();
      release();
    },
  };
};
