/**
 * The usual integration setup in one call: a private nats-server, a NATS connection with the
 * streams, real accounts, the real `{base_url}` app with the real guard on a free port, and, with
 * `worker: true`, a generation worker storing to ARTIFACT_STORE (by default a temporary artifacts
 * directory).
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

export type TestStack = {
  config: Config;
  server: TestNats;
  nats: Nats;
  accounts: TestAccounts;
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
  const server = await startTestNats();
  const nats = await connectTestNats(server.url, config);
  const accounts = await startTestAccounts(nats, config);
  const http = await startTestHttp(nats, config, accounts);
  let worker: JobWorker | null = null;
  if (opts.worker) {
    // The worker stores where the configuration says (ARTIFACT_STORE), as app/worker.ts does.
    const store = (await openArtifactStores(nats, artifactStoreSettings(config))).primary;
    worker = await startJobWorker(nats, createLogger('silent'), { artifactsDir: artifacts, store });
  }
  return {
    config,
    server,
    nats,
    accounts,
    http,
    artifacts,
    async close() {
      await worker?.stop();
      await http.close();
      accounts.stop();
      await nats.nc.close();
      await server.cleanup();
      rmSync(artifacts, { recursive: true, force: true });
    },
  };
}
