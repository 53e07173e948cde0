/**
 * The usual integration setup in one call. `startBase`: a private nats-server, a NATS connection
 * with the streams and real accounts (the edges a test runs are its own). `startStack`: the same
 * with the real `{base_url}` app with the real guard on a free port and, with `worker: true`, a
 * generation worker storing to ARTIFACT_STORE (by default a temporary artifacts directory).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type JobWorker, startJobWorker } from '../../consumers/generation/job-worker.ts';
import { artifactStoreSettings } from '../../gateways/http/app.ts';
import { openArtifactStores } from '../../platform/artifact-store/open.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from './accounts.ts';
import { connectTestNats, testConfig } from './gateway.ts';
import { startTestHttp, type TestHttp } from './http-app.ts';
import { startTestNats, type TestNats } from './nats.ts';

export type BaseStack = {
  config: Config;
  server: TestNats;
  nats: Nats;
  accounts: TestAccounts;
  /** Stops the accounts, closes the connection, stops the server and removes its store. */
  close(): Promise<void>;
};

/** A private nats-server, a connection with every stream and real accounts, configured by `config`. */
export async function startBase(config: Config = testConfig()): Promise<BaseStack> {
  const server = await startTestNats();
  const nats = await connectTestNats(server.url, config);
  const accounts = await startTestAccounts(nats, config);
  return {
    config,
    server,
    nats,
    accounts,
    async close() {
      accounts.stop();
      await nats.nc.close().catch(() => {});
      await server.cleanup();
    },
  };
}

export type TestStack = BaseStack & {
  http: TestHttp;
  /** The temporary artifacts directory (with `worker: true`). */
  artifacts: string;
  close(): Promise<void>;
};

export async function startStack(
  env: Record<string, string> = {},
  opts: { worker?: boolean } = {},
): Promise<TestStack> {
  const artifacts = mkdtempSync(join(tmpdir(), 'mdp-artifacts-'));
  const config = testConfig({ ARTIFACTS_DIR: artifacts, ...env });
  const base = await startBase(config);
  const { nats, accounts } = base;
  const http = await startTestHttp(nats, config, accounts);
  let worker: JobWorker | null = null;
  if (opts.worker) {
    // The worker stores where the configuration says (ARTIFACT_STORE), as app/worker.ts does.
    const store = (await openArtifactStores(nats, artifactStoreSettings(config))).primary;
    worker = await startJobWorker(nats, createLogger('silent'), { artifactsDir: artifacts, store });
  }
  return {
    ...base,
    http,
    artifacts,
    async close() {
      await worker?.stop();
      await http.close();
      await base.close();
      rmSync(artifacts, { recursive: true, force: true });
    },
  };
}
