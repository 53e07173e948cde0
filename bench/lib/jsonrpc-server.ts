/**
 * Worker: the server side of the JSON-RPC benchmark, one of
 * - `edge`: the real JSON-RPC edge started as `gateway jsonrpc --region us` starts it (the
 *   service's guard, its live tail, latest-state view, filter store and status hooks);
 * - `bare`: a bare fastify route `POST /` that answers the bytes it was given, whatever was asked
 *   (fastify's default JSON body parser included, as any route has).
 * Both listen on a free loopback port and report their URL.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { startJsonRpcGateway } from '../../app/jsonrpc-gateway.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { benchConfig } from './config.ts';
import { serveWorker } from './ipc.ts';
import { ProcStats } from './proc-stats.ts';

let close: () => Promise<void> = async () => {};
const proc = new ProcStats();

async function edge(args: { natsUrl: string; secret: string }): Promise<string> {
  const config = benchConfig({ API_KEY_SECRET: args.secret, JSONRPC_PORT_US: '0', HOST: '127.0.0.1' });
  const log = createLogger('warn', 'bench-jsonrpc');
  const nats = await connectNats(args.natsUrl, 'bench-jsonrpc', log);
  const guard = await startEdgeGuard(nats, config, log);
  const gateway = await startJsonRpcGateway(nats, config, log, 'us', guard);
  close = async () => {
    await gateway.stop();
    await guard.part.stop();
    await nats.nc.close();
  };
  proc.reset();
  return gateway.address;
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
