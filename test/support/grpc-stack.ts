/**
 * One gRPC edge on its own nats-server with real accounts (startBase), a client and a key of
 * `tier`: the set-up the gRPC integration tests share (`close()` is their afterAll).
 */
import type { Config } from '../../platform/config.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from './accounts.ts';
import { type PriceClient, priceClient, startTestGrpc, type TestGrpc } from './grpc.ts';
import { startBase } from './stack.ts';

export type GrpcStack = {
  nats: Nats;
  accounts: TestAccounts;
  edge: TestGrpc;
  client: PriceClient;
  key: string;
  close(): Promise<void>;
};

export async function startGrpcStack(config: Config, tier: 'pro' | 'quant'): Promise<GrpcStack> {
  const base = await startBase(config);
  const { nats, accounts } = base;
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
      await base.close();
    },
  };
}
