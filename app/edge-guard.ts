/** The guard of one process (key store + shared rate limiter), shared by all its edge surfaces. */
import { createApiKeyGuard } from '../gateways/core/api-key-guard.ts';
import type { Guard } from '../gateways/core/guard.ts';
import { KeyStore } from '../gateways/core/key-store.ts';
import { natsLossAdmission } from '../gateways/core/nats-loss.ts';
import { createRateLimiter } from '../gateways/core/rate-limit/rate-limiter.ts';
import { regionAdmission } from '../gateways/core/region-copy.ts';
import { openKvStreamSlots } from '../gateways/core/stream-slots.ts';
import { type Config, previousSecrets } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { createSecrets } from '../platform/secrets.ts';
import { type EdgeStatus, startEdgeStatus } from './status-parts.ts';

export const secretsOf = (config: Config) =>
  createSecrets(config.API_KEY_SECRET, config.API_KEY_SECRET_VERSION, previousSecrets(config));

/** The guard of one process, shared by all its edge surfaces. */
export async function startEdgeGuard(
  nats: Nats,
  config: Config,
  log: Logger,
): Promise<{ guard: Guard; part: Stoppable; keys: KeyStore; status: EdgeStatus }> {
  const keys = await KeyStore.start(nats, secretsOf(config), log);
  const limiter = await createRateLimiter(nats);
  const status = await startEdgeStatus(nats, log);
  const streamSlots = await openKvStreamSlots(nats, { ttlMs: config.STREAM_LEASE_TTL_MS });
  const guard = createApiKeyGuard({
    keys,
    limiter,
    streamSlots,
    maintenance: status.maintenance,
    checks: [
      natsLossAdmission(nats, config.NATS_LOST_CLOSE_MS),
      ...(nats.home ? [regionAdmission(nats, config.REGION_CONFIRM_MS)] : []),
    ],
    onIdentified: status.accounts.identified,
  });
  const stop = async () => {
    status.stop();
    await keys.stop();
    await limiter.close();
    await streamSlots.close();
  };
  return { guard, part: { name: 'edge-guard', stop }, keys, status };
}
