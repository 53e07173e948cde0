/**
 * What `GET /api/v1/status` and `GET /api/v1/public/status` show: per region and transport
 * up / degraded / maintenance; per source and coin of the platform feed, the last event time and
 * whether it is stale; the `MD` stream's first and last sequence; unresolved incidents; active and
 * upcoming maintenance windows; with other regions, how far each region's copy of `MD` is behind
 * (region-copies.ts). The public summary leaves out the feed detail, and neither shows
 * account data (who opened an incident or scheduled a window). Feed figures are computed at most
 * once per second (one JetStream look-up per feed subject, at most MAX_FEED_SUBJECTS).
 */

import type { StatusBoard } from '../../../consumers/status/board.ts';
import {
  type Incident,
  type MaintenanceWindow,
  REGIONS,
  type Region,
  STATUS_TRANSPORTS,
  type StatusTransport,
  windowActive,
  windowCovers,
} from '../../../contracts/status.ts';
import { STREAMS } from '../../../contracts/streams.ts';
import { MD_ALL, parseMdSubject } from '../../../contracts/subjects.ts';
import type { Nats } from '../../../platform/nats.ts';
import type { RegionCopyView } from './region-copies.ts';

const MAX_FEED_SUBJECTS = 1_000;
const FEED_CACHE_MS = 1_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export const presentIncident = (i: Incident, withAccount = false) => ({
  id: i.id,
  title: i.title,
  status: i.status,
  impact: i.impact,
  regions: i.regions,
  transports: i.transports,
  created_at: iso(i.created_at),
  updated_at: iso(i.updated_at),
  resolved_at: iso(i.resolved_at),
  updates: i.updates.map((u) => ({ at: iso(u.at), status: u.status, message: u.message })),
  ...(withAccount ? { created_by: i.created_by } : {}),
});

export const presentWindow = (w: MaintenanceWindow, now: number, withAccount = false) => ({
  id: w.id,
  regions: w.regions,
  transports: w.transports,
  starts_at: iso(w.starts_at),
  ends_at: iso(w.ends_at),
  message: w.message,
  state:
    w.cancelled_at !== null
      ? 'cancelled'
      : windowActive(w, now)
        ? 'active'
        : now < w.starts_at
          ? 'upcoming'
          : 'ended',
  created_at: iso(w.created_at),
  ...(withAccount ? { created_by: w.created_by, cancelled_at: iso(w.cancelled_at) } : {}),
});

type Feed = { source: string; coin: string; last_event_at: string; stale: boolean };
type TransportState = 'up' | 'degraded' | 'maintenance';

export type StatusViewDeps = {
  nats: Nats;
  board: StatusBoard;
  staleAfterMs: number;
  /** The other regions' copies (region-copies.ts); none in a single region. */
  regions?: () => RegionCopyView[];
};

export function createStatusView(deps: StatusViewDeps) {
  let cached: {
    at: number;
    value: Promise<{ feeds: Feed[]; md: { first_seq: number; last_seq: number } }>;
  } | null = null;

  function transports(now: number) {
    const windows = deps.board.pendingWindows().filter((w) => windowActive(w, now));
    const incidents = deps.board.openIncidents();
    const stateOf = (region: Region | null, t: StatusTransport): TransportState => {
      if (windows.some((w) => windowCovers(w, region, t))) return 'maintenance';
      const hit = incidents.some(
        (i) => i.transports.includes(t) && (region === null || i.regions.includes(region)),
      );
      return hit || !deps.nats.connected() ? 'degraded' : 'up';
    };
    const regional = STATUS_TRANSPORTS.filter((t) => t !== 'simulation');
    return [
      ...REGIONS.flatMap((region) =>
        regional.map((transport) => ({ region, transport, state: stateOf(region, transport) })),
      ),
      { region: null, transport: 'simulation' as const, state: stateOf(null, 'simulation') },
    ];
  }

  async function readFeeds(now: number) {
    const info = await deps.nats.jsm.streams.info(STREAMS.MD, { subjects_filter: MD_ALL });
    const subjects = Object.keys(info.state.subjects ?? {}).slice(0, MAX_FEED_SUBJECTS);
    const last = new Map<string, { source: string; coin: string; at: number }>();
    for (const subject of subjects) {
      const parts = parseMdSubject(subject);
      const msg = parts
        ? await deps.nats.jsm.streams.getMessage(STREAMS.MD, { last_by_subj: subject })
        : null;
      if (!parts || !msg) continue;
      const key = `${parts.source}.${parts.symbol}`;
      const at = msg.time.getTime();
      if ((last.get(key)?.at ?? 0) < at) last.set(key, { source: parts.source, coin: parts.symbol, at });
    }
    const feeds = [...last.values()]
      .sort((a, b) => a.source.localeCompare(b.source) || a.coin.localeCompare(b.coin))
      .map((f) => ({
        source: f.source,
        coin: f.coin,
        last_event_at: iso(f.at) ?? '',
        stale: now - f.at > deps.staleAfterMs,
      }));
    return { feeds, md: { first_seq: info.state.first_seq, last_seq: info.state.last_seq } };
  }

  function feeds(now: number) {
    if (!cached || now - cached.at >= FEED_CACHE_MS) {
      const value = readFeeds(now);
      cached = { at: now, value };
      value.catch(() => {
        if (cached?.value === value) cached = null;
      });
    }
    return cached.value;
  }

  function summary(now: number) {
    const t = transports(now);
    const windows = deps.board.pendingWindows();
    const overall = t.some((x) => x.state === 'maintenance')
      ? 'maintenance'
      : t.some((x) => x.state === 'degraded')
        ? 'degraded'
        : 'ok';
    return {
      status: overall,
      generated_at: iso(now),
      transports: t,
      ...(deps.regions ? { regions: deps.regions() } : {}),
      incidents: deps.board.openIncidents().map((i) => presentIncident(i)),
      maintenance: {
        active: windows.filter((w) => windowActive(w, now)).map((w) => presentWindow(w, now)),
        upcoming: windows.filter((w) => w.starts_at > now).map((w) => presentWindow(w, now)),
      },
    };
  }

  return {
    /** The keyless summary. */
    public: () => summary(Date.now()),
    /** The summary with the feeds and the `MD` stream's range (`status:read`). */
    async full() {
      const now = Date.now();
      const { feeds: list, md } = await feeds(now);
      return { ...summary(now), feeds: list, md_stream: md };
    },
  };
}
