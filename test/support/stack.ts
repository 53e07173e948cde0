/**
 * The usual integration setup in one call: a private nats-server, a NATS connection with the
 * streams, real accounts, and the real `{base_url}` app with the real guard on a free port.
 */
import type { Config } from '../../platform/config.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from './accounts.ts';
import { connectTestNats, testConfig } from './gateway.ts';
import { startTestHttp, type TestHttp } from './http-app.ts';
import { startTestNats, type TestNats } from './nats.ts';

export type TestStack = {
  config: Config;
  server: TestNats;
  nats: Nats;
  accounts: TestAccounts;
  http: TestHttp;
  close(): Promise<void>;
};

export async function startStack(env: Record<string, string> = {}): Promise<TestStack> {
  const config = testConfig(env);
  const server = await startTestNats();
  const nats = await connectTestNats(server.url, config);
  const accounts = await startTestAccounts(nats, config);
  const http = await startTestHttp(nats, config, accounts);
  return {
    config,
    server,
    nats,
    accounts,
    http,
    async close() {
      await http.close();
      accounts.stop();
      await nats.nc.close();
      await server.cleanup();
    },
  };
}
