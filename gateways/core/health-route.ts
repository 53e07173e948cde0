/**
 * `GET /healthz` of every live-data edge (unified, JSON-RPC, disk-sync): 200 `{"status":"ok"}` while
 * NATS is connected and the streams exist with a leader; 503 otherwise. In a region other than
 * home, `region` says how far its copy of `MD` is behind (region-copy.ts): a region cut off from
 * home stays healthy and serves what it holds.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import { STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';
import { regionCopyState } from './region-copy.ts';

const CHECK_TIMEOUT_MS = 1_500;

/**
 * MD answers and has a leader. A node cut off from its cluster (its routes down, its clients still
 * on it) answers stream info from its own replica, with no leader, after a few seconds (nats-server
 * 2.9): that node can serve no stream, so the edges on it are not healthy.
 */
async function mdLed(nats: Nats): Promise<boolean> {
  const info = await nats.jsm.streams.info(STREAMS.MD);
  return !info.cluster || Boolean(info.cluster.leader);
}

export async function healthy(nats: Nats): Promise<boolean> {
  if (!nats.connected()) return false;
  const timeout = new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(false), CHECK_TIMEOUT_MS).unref(),
  );
  return Promise.race([mdLed(nats).catch(() => false), timeout]);
}

export function registerHealthRoute(app: FastifyInstance, nats: Nats): void {
  app.get('/healthz', async (_req, reply) => {
    if (!(await healthy(nats))) {
      reply.header('retry-after', '1');
      throw new ApiError('feed_unavailable', 'market data log unreachable or not initialised');
    }
    const region = regionCopyState(nats);
    return reply.send({ status: 'ok', ...(region ? { region } : {}) });
  });
}
