/**
 * The saturation phase's SSE clients split over several worker processes (bench/lib/sse-clients.ts
 * each), so that at 100 to 1,000 clients what is measured is the server, not one client process
 * parsing a million events a second. Calls go to every process; `connect` splits the clients
 * evenly; `waitAll` merges the answers (events summed, time to the last delivery the latest, the
 * load of each process listed).
 */
import { Histogram, type LatencySummary, type SerializedHistogram } from './histogram.ts';
import { startWorker, type Worker } from './ipc.ts';
import type { ProcSnapshot } from './proc-stats.ts';

export type GroupBurstResult = {
  completed: boolean;
  seconds: number;
  events: number;
  events_per_s: number;
  /** Socket reads of every connection, and events per read. */
  reads: number;
  events_per_read: number;
  first_connection_done_s: number | null;
  gaps: number;
  duplicates: number;
  closed_connections: number;
  open_connections: number;
  since_connect: { closed_connections: number; errors: Record<string, number> };
  /** The busiest client process's figures (elu, cpu) and each process's. */
  proc: ProcSnapshot;
  procs: ProcSnapshot[];
};

type One = Omit<GroupBurstResult, 'procs'>;

export class SseClientGroup {
  /** Whether the processes have read one whole burst yet (the first is slower: bench/unified.ts). */
  warmedUp = false;

  private constructor(private readonly workers: Worker[]) {}

  static async start(processes: number): Promise<SseClientGroup> {
    return new SseClientGroup(
      await Promise.all(
        Array.from({ length: processes }, () =>
          // BENCH_CLIENT_NODE_ARGS: node flags for the client processes (e.g. --cpu-prof).
          startWorker('sse-clients', {
            nodeArgs: (process.env.BENCH_CLIENT_NODE_ARGS ?? '').split(' ').filter(Boolean),
          }),
        ),
      ),
    );
  }

  get size(): number {
    return this.workers.length;
  }

  /** Opens `n` clients split evenly: how many are open, and how long the slowest process took. */
  async connect(url: string, n: number): Promise<{ connections: number; ms: number }> {
    const k = this.workers.length;
    const rs = await Promise.all(
      this.workers.map((w, i) =>
        w.call<{ connections: number; ms: number }>('connect', {
          url,
          n: Math.floor(n / k) + (i < n % k ? 1 : 0),
        }),
      ),
    );
    return {
      connections: rs.reduce((a, r) => a + r.connections, 0),
      ms: Math.max(...rs.map((r) => r.ms)),
    };
  }

  async all(cmd: string, args: unknown = {}): Promise<void> {
    await Promise.all(this.workers.map((w) => w.call(cmd, args)));
  }

  async waitAll(timeoutMs: number): Promise<GroupBurstResult> {
    const rs = await Promise.all(
      this.workers.map((w) => w.call<One>('waitAll', { timeoutMs }, timeoutMs + 10_000)),
    );
    const firsts = rs.map((r) => r.first_connection_done_s).filter((x): x is number => x !== null);
    return {
      ...mergeCounts(rs),
      completed: rs.every((r) => r.completed),
      first_connection_done_s: firsts.length ? Math.min(...firsts) : null,
    };
  }

  /**
   * The group as the one client process the latency windows drive (bench/unified.ts): `connect`
   * splits the clients, the raw consumer beside them (`natsLatency*`) runs in the first process,
   * and `snapshot` merges every process's (counts summed, latencies merged from their histograms,
   * the busiest process's load as `proc`, each in `procs`).
   */
  asOneClient(): Pick<Worker, 'call'> {
    return {
      call: async <T>(cmd: string, args: unknown = {}): Promise<T> => {
        if (cmd === 'connect') return (await this.connect(...connectArgs(args))) as T;
        if (cmd.startsWith('natsLatency')) return (this.workers[0] as Worker).call<T>(cmd, args);
        if (cmd !== 'snapshot') return (await this.all(cmd, args)) as T;
        return mergeSnapshots(await Promise.all(this.workers.map((w) => w.call<Snapshot>('snapshot')))) as T;
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }
}

const connectArgs = (args: unknown): [string, number] => {
  const a = args as { url: string; n: number };
  return [a.url, a.n];
};

/** One client process's figures for a latency window since its last reset (sse-clients.ts `snapshot`). */
export type ClientSnapshot = {
  nats?: { events: number; gaps: number; latency_us: LatencySummary };
  seconds: number;
  events: number;
  events_per_s: number;
  /** Events per socket read over every connection: how finely the server's writes arrived. */
  events_per_read: number;
  latency_us: LatencySummary;
  gaps: number;
  duplicates: number;
  malformed: number;
  closed_connections: number;
  errors: Record<string, number>;
  notices: Record<string, number>;
  open_connections: number;
  since_connect: { closed_connections: number; errors: Record<string, number> };
  min_events_per_connection: number;
  proc: ProcSnapshot;
};

type Snapshot = ClientSnapshot & { reads: number; latency_histogram: SerializedHistogram };

/** What every process's answer has: summed, the latest time, the busiest process's load. */
type Counts = Pick<
  GroupBurstResult,
  | 'seconds'
  | 'events'
  | 'reads'
  | 'gaps'
  | 'duplicates'
  | 'closed_connections'
  | 'open_connections'
  | 'since_connect'
  | 'proc'
>;

function addCounts(into: Record<string, number>, from: Record<string, number>): Record<string, number> {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
  return into;
}

function mergeCounts(rs: Counts[]) {
  const sum = (f: (r: Counts) => number) => rs.reduce((a, r) => a + f(r), 0);
  const seconds = Math.max(...rs.map((r) => r.seconds));
  const events = sum((r) => r.events);
  const reads = sum((r) => r.reads);
  return {
    seconds,
    events,
    events_per_s: Math.round(events / seconds),
    reads,
    events_per_read: Math.round((events / Math.max(1, reads)) * 10) / 10,
    gaps: sum((r) => r.gaps),
    duplicates: sum((r) => r.duplicates),
    closed_connections: sum((r) => r.closed_connections),
    open_connections: sum((r) => r.open_connections),
    since_connect: {
      closed_connections: sum((r) => r.since_connect.closed_connections),
      errors: rs.reduce((a, r) => addCounts(a, r.since_connect.errors), {}),
    },
    proc: rs.reduce((a, b) => (b.proc.elu > a.proc.elu ? b : a)).proc,
    procs: rs.map((r) => r.proc),
  };
}

function mergeSnapshots(rs: Snapshot[]): ClientSnapshot & { procs: ProcSnapshot[] } {
  const latency = new Histogram();
  for (const r of rs) latency.merge(Histogram.from(r.latency_histogram));
  const withConns = rs.filter((r) => r.open_connections > 0);
  return {
    ...mergeCounts(rs),
    latency_us: latency.summary(),
    ...(rs[0]?.nats ? { nats: rs[0].nats } : {}),
    malformed: rs.reduce((a, r) => a + r.malformed, 0),
    errors: rs.reduce((a, r) => addCounts(a, r.errors), {}),
    notices: rs.reduce((a, r) => addCounts(a, r.notices), {}),
    min_events_per_connection: withConns.length
      ? Math.min(...withConns.map((r) => r.min_events_per_connection))
      : 0,
  };
}
