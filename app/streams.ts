/**
 * Creates or updates every stream the platform uses, with the configured retention and replicas,
 * and records the replicas on the connection for the KV buckets created after it.
 */
import { streamDefinitions } from '../contracts/streams.ts';
import type { Config } from '../platform/config.ts';
import { ensureStreams, type Nats } from '../platform/nats.ts';

export async function setupStreams(nats: Nats, config: Config): Promise<void> {
  nats.replicas = config.STREAM_REPLICAS;
  await ensureStreams(
    nats.jsm,
    streamDefinitions({
      mdMaxAgeSeconds: config.MD_MAX_AGE_S,
      mdMaxMsgs: config.MD_MAX_MSGS,
      mdMaxBytes: config.MD_MAX_BYTES,
      replicas: config.STREAM_REPLICAS,
      cacheMaxBytes: config.CACHE_MAX_BYTES,
      cacheMaxAgeSeconds: config.CACHE_MAX_AGE_S,
      ownMaxBytes: config.OWN_MAX_BYTES,
      ownMaxAgeSeconds: config.OWN_MAX_AGE_S,
      ownMaxMsgs: config.OWN_MAX_MSGS,
    }),
  );
}
