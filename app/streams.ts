/**
 * Creates or updates every stream the platform uses, with the configured retention and replicas,
 * and records the replicas on the connection for the KV buckets created after it.
 */
import { streamDefinitions } from '../contracts/streams.ts';
import type { Config } from '../platform/config.ts';
import { createLogger, type Logger } from '../platform/logger.ts';
import { ensureStreams, type Nats } from '../platform/nats.ts';
import { setupRegionCopies } from './region-copies.ts';

/** In a region other than home, its mirrors instead (app/region-copies.ts). */
export async function setupStreams(
  nats: Nats,
  config: Config,
  log: Logger = createLogger('silent'),
): Promise<void> {
  if (config.NATS_HOME_DOMAIN) return setupRegionCopies(nats, config, log);
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
