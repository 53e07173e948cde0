/**
 * When each key was last used, in every region: the home region's usage bucket and, for each other
 * region (NATS_REGION_DOMAINS), that region's own, where its edges record the keys they admit (a
 * key used only in JP would otherwise show as never used in the console). The latest wins; a
 * region that does not answer within 2 s (a cut link) counts as no use.
 */
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { BUCKET_OPTIONS, openBucket, regionsView } from '../../platform/kv.ts';
import type { Nats } from '../../platform/nats.ts';

export type LastUsed = { get(keyId: string): Promise<number | null> };

export async function lastUsedEverywhere(nats: Nats, regionDomains: readonly string[]): Promise<LastUsed> {
  const home = await openBucket<number>(nats, KV_BUCKETS.keyUsage, BUCKET_OPTIONS[KV_BUCKETS.keyUsage]);
  if (regionDomains.length === 0) return home;
  const regions = regionsView<number>(nats, KV_BUCKETS.keyUsage, regionDomains);
  return {
    async get(keyId) {
      const [here, there] = await Promise.all([home.get(keyId), regions.get(keyId)]);
      const used = [here, ...there].filter((t): t is number => typeof t === 'number');
      return used.length > 0 ? Math.max(...used) : null;
    },
  };
}
