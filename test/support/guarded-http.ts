/**
 * The real `{base_url}` app with a real API-key guard whose parts the test holds: the key store
 * (to look at a key's revocation signal) and the shared rate limiter, optionally on a frozen clock
 * (no refill: a Basic key has exactly its burst of 25 tokens, whatever the machine's speed).
 */
import { createApiKeyGuard } from '../../gateways/core/api-key-guard.ts';
import { KeyStore } from '../../gateways/core/key-store.ts';
import { createRateLimiter } from '../../gateways/core/rate-limit/rate-limiter.ts';
import { buildHttpApp, type HttpApp } from '../../gateways/http/app.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { createSecrets } from '../../platform/secrets.ts';
import type { TestAccounts } from './accounts.ts';

export type GuardedHttp = HttpApp & {
  url: string;
  keys: KeyStore;
  /** The shared revocation signal of `key` in this app's key store. */
  signalOf(key: string): AbortSignal;
  close(): Promise<void>;
};

export async function startGuardedHttp(
  nats: Nats,
  config: Config,
  accounts: TestAccounts,
  opts: { clock?: () => number } = {},
): Promise<GuardedHttp> {
  const log = createLogger(config.LOG_LEVEL, 'http');
  const secrets = createSecrets(config.API_KEY_SECRET, config.API_KEY_SECRET_VERSION);
  const keys = await KeyStore.start(nats, secrets, log);
  const limiter = await createRateLimiter(nats, opts.clock ? { now: opts.clock } : {});
  const guard = createApiKeyGuard({ keys, limiter });
  const http = await buildHttpApp({ nats, accounts: accounts.service, guard, config, log });
  const url = await http.app.listen({ host: '127.0.0.1', port: 0 });
  http.setListenAddress(url);
  return {
    ...http,
    url,
    keys,
    signalOf: (key) => keys.revocationSignal(keys.hash(key)),
    async close() {
      await http.shutdown();
      await keys.stop();
      await limiter.close();
    },
  };
}
