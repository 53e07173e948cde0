/** Creates or updates every stream the platform uses, with the configured retention. */
import { streamDefinitions } from '../contracts/streams.ts';
import type { Config } from '../platform/config.ts';
import { ensureStreams, type Nats } from '../platform/nats.ts';

export async function setupStreams(nats: Nats, config: Config): Promise<void> {
  await ensureStreams(
    nats.jsm,
    streamDefinitions({
      mdMaxAgeSeconds: config.MD_MAX_AGE_S,
      mdMaxMsgs: config.MD_MAX_MSGS,
      mdMaxBytes: config.MD_MAX_BYTES,
      replicas: config.STREAM_REPLICAS,
    }),
  );
}
