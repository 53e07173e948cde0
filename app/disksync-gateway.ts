/** The disk-sync WebSocket edge of one region, on the process's shared live tail and guard. */

import { attachEdgeStatus } from '../gateways/core/edge-status.ts';
import type { Guard } from '../gateways/core/guard.ts';
import { buildDisksyncApp, disksyncSettings } from '../gateways/disksync/app.ts';
import { KeyLeases } from '../gateways/disksync/lease.ts';
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { tlsOptions } from '../platform/tls.ts';
import type { EdgeStatus } from './edge-status.ts';
import { acquireTail } from './shared-tail.ts';
import type { Region } from './unified-gateway.ts';

export async function startDisksyncGateway(
  nats: Nats,
  config: Config,
  log: Logger,
  region: Region,
  edge: { guard: Guard; status: EdgeStatus },
): Promise<Stoppable & { address: string }> {
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
}
