/**
 * How far this region's copy of `MD` is behind the home region's (a region other than home,
 * app/region-copies.ts), read once a second per process: this region's newest sequence, the home
 * region's (asked across the link; null when it does not answer within the second), the
 * difference (`lag`, events), and how long ago the mirror last heard from home (`last_contact_ms`,
 * the mirror's own account; it grows while the link is down). Shown by `/healthz`, on JSON-RPC
 * answers (headers) and in gRPC `GetBlockNumber`; the guard refuses new admissions once the last
 * contact is older than REGION_CONFIRM_MS (keys can no longer be confirmed). Null at home.
 */
import type { JetStreamManager, StreamInfo } from '@nats-io/jetstream';
import { ApiError } from '../../contracts/errors.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { inTime } from '../../platform/in-time.ts';
import type { Nats } from '../../platform/nats.ts';

export type RegionCopyState = {
  /** The home region's JetStream domain. */
  home: string;
  last_seq: number;
  home_last_seq: number | null;
  /** Events the home region holds that this region's copy does not (null: home not answering). */
  lag: number | null;
  last_contact_ms: number | null;
};

const REFRESH_MS = 1_000;

type Monitor = { state: RegionCopyState | null; timer: NodeJS.Timeout };
const monitors = new WeakMap<Nats, Monitor>();

/**
 * A region's copy of `MD` (its stream info) against the home region's newest sequence (null: not
 * known): its newest sequence, the events it lacks, and how long ago its mirror heard from home.
 * Read in the region (below) and at home for the status (gateways/http/status/region-copies.ts).
 */
export function copyState(
  copy: StreamInfo,
  homeLast: number | null,
): Pick<RegionCopyState, 'last_seq' | 'lag' | 'last_contact_ms'> {
  const active = Number(copy.mirror?.active ?? -1);
  return {
    last_seq: copy.state.last_seq,
    lag: homeLast === null ? null : Math.max(0, homeLast - copy.state.last_seq),
    last_contact_ms: active >= 0 ? Math.round(active / 1e6) : null,
  };
}

async function read(
  nats: Nats,
  home: { domain: string; jsm: JetStreamManager },
): Promise<RegionCopyState | null> {
  const [local, homeLast] = await Promise.all([
    nats.jsm.streams.info(STREAMS.MD),
    inTime(
      home.jsm.streams.info(STREAMS.MD).then((i) => i.state.last_seq),
      REFRESH_MS - 100,
    ),
  ]);
  if (!local.mirror) return null;
  return { home: home.domain, home_last_seq: homeLast, ...copyState(local, homeLast) };
}

/** The latest state (refreshed in the background, started by the first call); null at home or before the first read. */
export function regionCopyState(nats: Nats): RegionCopyState | null {
  const home = nats.home;
  if (!home) return null;
  let m = monitors.get(nats);
  if (!m) {
    const monitor: Monitor = { state: null, timer: setInterval(() => refresh(), REFRESH_MS) };
    const refresh = () =>
      read(nats, home).then(
        (s) => {
          monitor.state = s;
        },
        () => {},
      );
    monitor.timer.unref();
    void nats.nc.closed().then(() => clearInterval(monitor.timer));
    monitors.set(nats, monitor);
    void refresh();
    m = monitor;
  }
  return m.state;
}

/** The state as response headers (JSON-RPC answers of a region other than home); none at home. */
export function regionCopyHeaders(nats: Nats): Record<string, string> {
  const s = regionCopyState(nats);
  if (!s) return {};
  return {
    'x-region-home': s.home,
    ...(s.lag === null ? {} : { 'x-region-lag': String(s.lag) }),
    ...(s.last_contact_ms === null ? {} : { 'x-region-last-contact-ms': String(s.last_contact_ms) }),
  };
}

/**
 * The guard's region rule: once this region's copy has not heard from home for longer than
 * `confirmMs`, new admissions are refused (`region_unconfirmed`): a key revoked at home meanwhile
 * cannot be known here, so no key is confirmed. Before the first reading, and at home, it admits.
 */
export function regionAdmission(nats: Nats, confirmMs: number): { admit(): void } {
  return {
    admit() {
      const s = regionCopyState(nats);
      if (s?.last_contact_ms != null && s.last_contact_ms > confirmMs)
        throw new ApiError(
          'region_unconfirmed',
          `this region has not heard from the home region (${s.home}) for ${Math.round(s.last_contact_ms / 1_000)} s, so API keys cannot be confirmed; retry later or use another region`,
        );
    },
  };
}
