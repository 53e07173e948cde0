/**
 * A region other than home (NATS_HOME_DOMAIN set): its own NATS holds mirrors of the home region's
 * streams its edges read (contracts/streams.ts, REGION_MIRRORED_*), made through the home domain's
 * JetStream API across the leaf-node link. A mirror stores every message at the origin's sequence
 * with the origin's stored time (test/integration/region-mirror-seq.test.ts checks it on the
 * nats-server in use), so `seq`, `id:`, `after_seq` and `from_seq`, and a replay by time, mean the
 * same in both regions. Its limits are the origin's; its replicas this region's. Buckets opened
 * afterwards under a mirrored name are read from the mirror (nats.js binds a KV to a mirror when
 * the stream exists); every other bucket is the region's own.
 */

import { setTimeout as sleep } from 'node:timers/promises';
import { type JetStreamManager, jetstreamManager, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { REGION_MIRRORED_BUCKETS, REGION_MIRRORED_STREAMS } from '../contracts/streams.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';

/** How long a region's process waits at start for the home region to answer (link up, streams made). */
const HOME_WAIT_MS = 120_000;

export const mirroredNames = (): string[] => [
  ...REGION_MIRRORED_STREAMS,
  ...REGION_MIRRORED_BUCKETS.map((b) => `KV_${b}`),
];

/** The mirror of `origin` in this region: the origin's limits, this region's replicas. */
export function mirrorConfig(
  origin: StreamConfig,
  homeDomain: string,
  replicas: number,
): Partial<StreamConfig> & { name: string } {
  return {
    name: origin.name,
    storage: StorageType.File,
    max_age: origin.max_age,
    max_msgs: origin.max_msgs,
    max_bytes: origin.max_bytes,
    max_msgs_per_subject: origin.max_msgs_per_subject,
    num_replicas: replicas,
    mirror: { name: origin.name, external: { api: `$JS.${homeDomain}.API`, deliver: '' } },
  };
}

async function untilAnswered<T>(what: string, ask: () => Promise<T>, log: Logger): Promise<T> {
  const deadline = Date.now() + HOME_WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    try {
      return await ask();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`${what}: ${String(err)}`);
      if (attempt % 10 === 0) log.warn({ err: String(err) }, `${what}: waiting for the home region`);
      await sleep(500);
    }
  }
}

/** Creates the region's mirrors (kept as they are when present); sets `nats.home`. */
export async function setupRegionCopies(nats: Nats, config: Config, log: Logger): Promise<void> {
  const domain = config.NATS_HOME_DOMAIN as string;
  nats.replicas = config.STREAM_REPLICAS;
  const home: JetStreamManager = await untilAnswered(
    `home region's JetStream (domain ${domain})`,
    () => jetstreamManager(nats.nc, { domain, timeout: 5_000 }),
    log,
  );
  nats.home = { domain, jsm: home };
  for (const name of mirroredNames()) {
    const local = await nats.jsm.streams.info(name).catch(() => null);
    if (local) {
      if (!local.config.mirror)
        throw new Error(`stream ${name} exists in this region and is not a mirror of the home region's`);
      continue;
    }
    const origin = await untilAnswered(`home stream ${name}`, () => home.streams.info(name), log);
    await nats.jsm.streams
      .add(mirrorConfig(origin.config, domain, config.STREAM_REPLICAS))
      .catch(async (err) => {
        // Another process of the region made it first.
        if (!(await nats.jsm.streams.info(name).catch(() => null))?.config.mirror) throw err;
      });
    log.info({ stream: name, home: domain }, 'region mirror created');
  }
}
