/**
 * One gRPC edge on its own nats-server with real accounts, a client and a key of `tier`: the set-up
 * the gRPC integration tests share (`close()` is their afterAll).
 */
import type { Config } from '../../platform/config.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from './accounts.ts';
import { connectTestNats } from './gateway.ts';
import { type PriceClient, priceClient, startTestGrpc, type TestGrpc } from './grpc.ts';
import { startTestNats } from './nats.ts';

export type GrpcStack = {
  nats: Nats;
  accounts: TestAccounts;
  edge: TestGrpc;
  client: PriceClient;
  key: string;
  close(): Promise<void>;
};

export async function startGrpcStack(config: Config, tier: 'pro' | 'quant'): Promise<GrpcStack> {
  const server = await startTestNats();
  const nats = await connectTestNats(server.url, config);
  const accounts = await startTestAccounts(nats, config);
  const edge = await startTestGrpc(nats, config);
  const client = priceClient(edge.target);
  const key = (await accounts.key(tier)).key;
  return {
    nats,
    accounts,
    edge,
    client,
    key,
    async close() {
      client.close();
      await edge.close();
      accounts.stop();
      await nats.nc.close();
      await server.cleanup();
    },
  };
}
