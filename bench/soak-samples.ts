/**
 * What the soak samples from each process and how it judges it: RSS and open file descriptors
 * from /proc, a health round trip (the event-loop delay as seen from outside: HTTP /healthz on
 * HTTP and WebSocket edges, grpc.health.v1 Check on gRPC edges), and the drift of a series after
 * warm-up (mean of the last quarter of its life in the run over the mean of the second quarter).
 *
 * Which drifts are judged: a process's RSS and handles, each over its own life (a replica started
 * during the run warms up from its own start), if it lived SETTLED_LIFE_MS or more; NATS nodes
 * (`judge: false`) are only reported: a node's descriptors are its JetStream store's open block
 * files plus the connections that happen to land on it (a node kill moves them, a restarted node reopens fewer files), and
 * its memory follows the stream leaderships a kill moves.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { healthStatus } from '../test/support/grpc-discovery.ts';
import { sleep } from './lib/ipc.ts';

export type Sample = { t: number; rss_mb: number; fds: number; healthz_ms: number | null };

export function procSample(pid: number): { rss_mb: number; fds: number } | null {
  try {
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return { rss_mb: Math.round(Number(rss) / 1024), fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null;
  }
}

/** Milliseconds for one health answer from the process listening at `url`, null if none in 5 s. */
export async function healthRoundTrip(url: string): Promise<number | null> {
  const t0 = performance.now();
  const u = new URL(url.replace(/^ws/, 'http'));
  if (u.protocol === 'grpc:') {
    const s = await healthStatus(u.host);
    return s === 'SERVING' ? Math.round(performance.now() - t0) : null;
  }
  const res = await fetch(`${u.origin}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
  return res?.ok ? Math.round(performance.now() - t0) : null;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Mean of the last quarter over the mean of the second quarter, minus 1 (null: too few samples). */
export function drift(
  samples: Sample[],
  pick: (s: Sample) => number,
  startMs: number,
  endMs: number,
): number | null {
  const q = (endMs - startMs) / 4;
  const second = samples.filter((s) => s.t >= startMs + q && s.t < startMs + 2 * q).map(pick);
  const last = samples.filter((s) => s.t >= startMs + 3 * q).map(pick);
  if (second.length < 2 || last.length < 2) return null;
  return Math.round((mean(last) / mean(second) - 1) * 1_000) / 1_000;
}

/** A process's own life under which its heap is still settling: its drift is reported, not judged. */
export const SETTLED_LIFE_MS = 10 * 60_000;

/** A process to sample: `url` where it answers health; `judge: false` to report it only. */
export type Watched = { name: string; pid: number; url: string | null; judge?: boolean };

type Series = { born: number; url: boolean; judge: boolean; samples: Sample[] };

export type ProcessReport = {
  process: string;
  samples: number;
  rss_mb: { first?: number; last?: number };
  fds: { first?: number; last?: number };
  rss_drift: number | null;
  fds_drift: number | null;
  judged: boolean;
  health_ms_max: number | null;
  health_unanswered: number | null;
};

/** Samples `watched()` every `everyMs` until `stop()`; `report()` says each process's drift. */
export function startSampler(watched: () => Watched[], everyMs: number) {
  const series = new Map<string, Series>();
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      for (const w of watched()) {
        const s = procSample(w.pid);
        const health = w.url ? await healthRoundTrip(w.url) : null;
        if (!s) continue;
        const entry = series.get(w.name) ?? {
          born: Date.now(),
          url: false,
          judge: w.judge ?? true,
          samples: [],
        };
        series.set(w.name, entry);
        entry.url ||= w.url !== null; // a replica says where it listens once it runs
        entry.samples.push({ t: Date.now(), ...s, healthz_ms: health });
      }
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      stopping = true;
      await loop;
    },
    report(startMs: number, endMs: number): ProcessReport[] {
      // Each process is measured over its own life: a replica restarted mid-run warms up from its
      // own start, not from the run's (a replacement started at 388 s of 1,800 was judged +10.2 %
      // from a "second quarter" that began 62 s after its birth).
      const lifeStart = (e: Series) => Math.max(startMs, e.born);
      return [...series.entries()].map(([name, e]) => {
        const health = e.samples.map((s) => s.healthz_ms);
        return {
          process: name,
          samples: e.samples.length,
          rss_mb: { first: e.samples[0]?.rss_mb, last: e.samples.at(-1)?.rss_mb },
          fds: { first: e.samples[0]?.fds, last: e.samples.at(-1)?.fds },
          rss_drift: drift(e.samples, (s) => s.rss_mb, lifeStart(e), endMs),
          fds_drift: drift(e.samples, (s) => s.fds, lifeStart(e), endMs),
          judged: e.judge && endMs - lifeStart(e) >= SETTLED_LIFE_MS,
          health_ms_max: e.url ? Math.max(0, ...health.map((h) => h ?? 0)) : null,
          health_unanswered: e.url ? health.filter((h) => h === null).length : null,
        };
      });
    },
  };
}
