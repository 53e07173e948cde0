/**
 * Worker: the server side of the JSON-RPC benchmark, one of
 * - `edge`: the real JSON-RPC edge (`buildJsonRpcApp` with the service's guard, its own live tail,
 *   latest-state view and filter store), as `gateway jsonrpc` runs it;
 * - `bare`: a bare fastify route `POST /` that answers the bytes it was given, whatever was asked
 *   (fastify's default JSON body parser included, as any route has).
 * Both listen on a free loopback port and report their URL.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { LatestState } from '../../gateways/core/latest-state.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildJsonRpcApp } from '../../gateways/jsonrpc/app.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { benchConfig } from './config.ts';
import { serveWorker } from './ipc.ts';
import { ProcStats } from './proc-stats.ts';

let close: () => Promise<void> = async () => {};
const proc = new ProcStats();

async function edge(args: { natsUrl: string; secret: string }): Promise<string> {
  const config = benchConfig({ API_KEY_SECRET: args.secret });
  const log = createLogger('warn', 'bench-jsonrpc');
  const nats = await connectNats(args.natsUrl, 'bench-jsonrpc', log);
  const guard = await startEdgeGuard(nats, config, log);
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const latest = await LatestState.start(nats, tail, log);
  const filters = await FilterStore.open(nats, config.JSONRPC_FILTER_TTL_S * 1_000);
  const rpc = buildJsonRpcApp({ config, nats, tail, latest, filters, guard: guard.guard, log, region: 'us' });
  const url = await rpc.app.listen({ host: '127.0.0.1', port: 0 });
  close = async () => {
    await rpc.shutdown();
    latest.stop();
    tail.stop();
    await guard.part.stop();
    await nats.nc.close();
  };
  proc.reset();
  return url;
}

async function bare(args: { bodies: Record<string, string> }): Promise<string> {
  const app: FastifyInstance = Fastify({ logger: false, bodyLimit: 1_048_576 });
  // The body names which answer to send (the same bytes the edge sent for that request).
  app.post('/', async (req, reply) => {
    const body = req.body as unknown;
    const which = Array.isArray(body) ? 'batch' : 'single';
    return reply.type('application/json; charset=utf-8').send(args.bodies[which]);
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  close = () => app.close();
  proc.reset();
  return url;
}

serveWorker({ edge, bare, proc: () => proc.read(), resetProc: () => proc.reset() }, () => close());
