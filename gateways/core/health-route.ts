/** `GET /healthz` of every live-data edge (unified, JSON-RPC): 200 `{"status":"ok"}` while NATS is connected and the streams exist; 503 otherwise. */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { type Nats, streamsExist } from '../../platform/nats.ts';

const CHECK_TIMEOUT_MS = 1_500;

export async function healthy(nats: Nats): Promise<boolean> {
  if (!nats.connected()) return false;
  const timeout = new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(false), CHECK_TIMEOUT_MS).unref(),
  );
  return Promise.race([streamsExist(nats.jsm, [STREAMS.MD]).catch(() => false), timeout]);
}

export function registerHealthRoute(app: FastifyInstance, nats: Nats): void {
  app.get('/healthz', async (_req, reply) => {
    if (!(await healthy(nats))) {
      reply.header('retry-after', '1');
      throw new ApiError('feed_unavailable', 'market data log unreachable or not initialised');
    }
    return reply.send({ status: 'ok' });
  });
}
