/**
 * What the status says of the other regions (the home region's view; NATS_REGION_DOMAINS names
 * their JetStream domains): for each, asked across the link every few seconds, its copy of `MD`:
 * newest sequence, how many events behind the home region it is, and how long ago it last heard
 * from home (its mirror's own account); `reachable: false` while the region does not answer. A
 * region's own edges say the same of themselves (gateways/core/region-copy.ts).
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { STREAMS } from '../../../contracts/streams.ts';
import { inTime } from '../../../platform/in-time.ts';
import type { Nats } from '../../../platform/nats.ts';
import { copyState } from '../../core/region-copy.ts';

export type RegionCopyView = {
  region: string;
  reachable: boolean;
  last_seq: number | null;
  lag: number | null;
  last_contact_ms: number | null;
  checked_at: string | null;
};

const REFRESH_MS = 2_000;
const ASK_MS = 1_500;

export function watchRegionCopies(
  nats: Nats,
  domains: readonly string[],
): { list(): RegionCopyView[]; stop(): void } {
  const views = new Map<string, RegionCopyView>(
    domains.map((d) => [
      d,
      { region: d, reachable: false, last_seq: null, lag: null, last_contact_ms: null, checked_at: null },
    ]),
  );
  const refresh = async () => {
    const homeLast = await nats.jsm.streams.info(STREAMS.MD).then(
      (i) => i.state.last_seq,
      () => null,
    );
    await Promise.all(
      domains.map(async (domain) => {
        const info = await inTime(
          jetstreamManager(nats.nc, { domain, timeout: ASK_MS, checkAPI: false }).then((jsm) =>
            jsm.streams.info(STREAMS.MD),
          ),
          ASK_MS,
        );
        views.set(domain, {
          region: domain,
          reachable: info !== null,
          ...(info ? copyState(info, homeLast) : { last_seq: null, lag: null, last_contact_ms: null }),
          checked_at: new Date().toISOString(),
        });
      }),
    );
  };
  const timer = setInterval(() => void refresh().catch(() => {}), REFRESH_MS);
  timer.unref();
  if (domains.length > 0) void refresh().catch(() => {});
  else clearInterval(timer);
  return { list: () => [...views.values()], stop: () => clearInterval(timer) };
}
