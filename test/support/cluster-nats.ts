/**
 * The test's own connection to a fresh NATS cluster, its streams set up at R3. A cluster answers
 * JetStream API requests (what `NatsCluster.ready` waits for) as soon as it has a meta leader,
 * which can be before every peer has joined: an R3 stream is then refused with "no suitable peers
 * for placement". Stream setup is idempotent, so it is retried until the peers are there.
 */

import type { ConnectionOptions } from '@nats-io/transport-node';
import { setupStreams } from '../../app/streams.ts';
import type { Config } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { eventually } from './eventually.ts';

/** `auth`: the credentials a cluster started with `--user`/`--pass` requires. */
export async function connectClusterNats(
  url: string,
  config: Config,
  timeoutMs = 120_000,
  auth: Partial<ConnectionOptions> = {},
): Promise<Nats> {
  const nats = await connectNats(url, 'test', createLogger(config.LOG_LEVEL, 'test'), auth);
  let lastError = '';
  try {
    await eventually(
      () =>
        setupStreams(nats, config).then(
          () => true,
          (err) => {
            lastError = String(err);
            return false;
          },
        ),
      timeoutMs,
      'streams placed on the cluster',
      500,
    );
  } catch (err) {
    await nats.nc.close().catch(() => {});
    throw new Error(`${(err as Error).message}; last error: ${lastError}`);
  }
  return nats;
}
