/**
 * `npm run soak -- --minutes N [--quiet-s S]` (also `npm run bench -- soak`, SOAK_MINUTES): the
 * local cluster (app/cluster-topology.ts: 3 NATS nodes, the simulator producer at SIM_TRADE_RATE
 * 50/s per coin, two US replicas each of the unified, JSON-RPC, gRPC and disk-sync edges) under
 * steady traffic on every transport: four SSE clients resuming by Last-Event-ID across both
 * unified replicas, two gRPC StreamEvents clients (after_seq) and two disk-sync clients (from_seq,
 * json and msgpack, a Quant key each), every one read on the raw wire (soak-clients.ts: what
 * arrives is counted, repeats included), JSON-RPC calls on both edges every 200 ms. The faults of
 * soak-faults.ts run one after another, each once at least and again from the top until N minutes
 * have passed: a destructive one (a kill) is followed by FAULT_GRACE_MS of grace, then every fault
 * by S seconds (default QUIET_MS) with no fault at all. Every 5 s each process's RSS and open file
 * descriptors (/proc: the app processes, the NATS nodes and this process, which holds the clients)
 * and its health round trip (soak-samples.ts).
 * Pass: every fault took place and was answered as it must be (its `judge`: a fault that fails to
 * inject fails the run; slow clients ended by the server and resumed exactly; the revoked key's
 * stream ended with `auth_expired`); no lost, repeated or foreign (outside the run) sequence on
 * any client's wire and every one in order; no server error (JSON-RPC HTTP 5xx, SSE refusals
 * 5xx, gRPC INTERNAL/UNKNOWN, disk-sync 1011) outside a kill and its grace (so none in the quiet
 * gaps, nor during a slow client or a revocation); and, from 10-minute runs on (shorter ones only report it), each
 * process's RSS and handles within ±10 % after the first quarter of its own life (warm-up). A
 * process started during the run (a replaced replica) is measured from its own start and judged
 * only if it lived 10 minutes or more; NATS nodes are reported, not judged (why: soak-samples.ts).
 * SOAK_FAULTS (comma-separated words) keeps only the faults whose names hold one of them.
 * Prints the result as JSON; exit code 1 when it fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startLocalCluster } from '../app/cluster-topology.ts';
import type { Nats } from '../platform/nats.ts';
import { startTestAccounts } from '../test/support/accounts.ts';
import { type ResumingReader, resumingReader, seqRange } from '../test/support/cluster.ts';
import { eventually } from '../test/support/eventually.ts';
import { connectTestNats, testConfig } from '../test/support/gateway.ts';
import { sleep } from './lib/ipc.ts';
import { diskClient, grpcClient, type SoakClient } from './soak-clients.ts';
import { liveReplicas, soakFaults } from './soak-faults.ts';
import { startSampler, type Watched } from './soak-samples.ts';

const progress = (msg: string) => process.stderr.write(`[soak] ${msg}\n`);
const SAMPLE_MS = 5_000;
/** After a kill: clients reconnect, elections settle; server errors here are the fault's. */
const FAULT_GRACE_MS = 15_000;
/** After every fault (and its grace): no fault; any server error fails the run. */
const QUIET_MS = Number(process.env.SOAK_QUIET_MS ?? 10_000);
/**
 * How long a slow client stops reading: long enough for the edge to end it at the default backlog
 * bounds (1 MB SSE and gRPC, 8 MB disk-sync) at the simulator's ~270 events/s. Loopback socket
 * buffers hold several MB (paused 30 s, an SSE and a disk-sync client were not ended and then read
 * 4.7 and 3.9 MB), and lowering the bounds instead ended a steady json disk-sync client 208 times.
 */
const SLOW_PAUSE_MS = Number(process.env.SOAK_SLOW_PAUSE_MS ?? 135_000);
/** After the producer stops, how long the clients have to reach the log's end (a disk-sync client
 * whose replica was killed may wait out the dead connection's key lease, 45 s). */
const DRAIN_MS = 120_000;

/**
 * The MD stream's last sequence, patiently: the last fault may have killed a NATS node just before
 * (in the 2-minute run it is the last thing before the end), and stream info times out until the
 * stream has a leader again. A 5 s request timeout here once failed a whole run.
 */
const lastSeqOfMd = async (nats: Nats): Promise<number> => {
  const read = async () => {
    const info = await nats.jsm.streams.info('MD').catch(() => null);
    return info ? { seq: info.state.last_seq } : null; // an object: 0 is a valid answer
  };
  return (await eventually(read, 60_000, 'MD stream info (its leader after the last fault)', 250)).seq;
};

export async function run(minutes = Number(process.env.SOAK_MINUTES ?? 2), quietMs = QUIET_MS) {
  const runMs = minutes * 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'mdp-soak-'));
  const config = testConfig({ STREAM_REPLICAS: '3' });
  const appEnv = { NODE_ENV: 'test', API_KEY_SECRET: config.API_KEY_SECRET, SIM_TRADE_RATE: '50' };
  progress(`starting the cluster for a ${minutes} min run …`);
  const cluster = await startLocalCluster({
    baseDir: dir,
    edges: ['unified', 'jsonrpc', 'grpc', 'disksync'],
    regions: ['us'],
    workers: 0,
    env: appEnv,
  }).catch((err: Error) => {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const nats = await connectTestNats(cluster.nats.url, config);
  const accounts = await startTestAccounts(nats, config);
  // SOAK_FAULTS: only the faults whose names contain one of these comma-separated words.
  const only = process.env.SOAK_FAULTS?.split(',').filter(Boolean);
  const faultList = soakFaults(cluster, accounts, () => SLOW_PAUSE_MS).filter(
    (f) => !only || only.some((w) => f.name.includes(w)),
  );
  progress(`${faultList.length} faults, each then ${quietMs / 1_000} s quiet`);
  const { key } = await accounts.key('quant');
  const diskKeys = [(await accounts.key('quant')).key, (await accounts.key('quant')).key];
  const urls = (edge: 'unified' | 'grpc' | 'disksync') =>
    liveReplicas(cluster, edge).map((p) => p.url as string);
  const rpcUrls = cluster.processes.filter((p) => p.name.startsWith('jsonrpc')).map((p) => p.url as string);
  const grpcTargets = urls('grpc').map((u) => new URL(u).host);

  const from = await lastSeqOfMd(nats);
  const clients: { transport: string; reader: ResumingReader | SoakClient }[] = [
    ...[0, 1, 2, 3].map((i) => ({
      transport: 'sse',
      reader: resumingReader(() => urls('unified'), key, from, i % 2),
    })),
    ...[0, 1].map((i) => ({ transport: 'grpc', reader: grpcClient(grpcTargets, key, from, i) })),
    ...[0, 1].map((i) => ({
      transport: 'disksync',
      reader: diskClient(() => urls('disksync'), diskKeys[i] as string, from, i, i ? 'msgpack' : 'json'),
    })),
  ];
  const rpc = { calls: 0, by_status: {} as Record<string, number>, fivexx_outside_faults: 0 };
  const faults: { at_s: number; took_s: number; fault: string; detail?: unknown; wrong: string[] }[] = [];
  const windows: { start: number; end: number }[] = [];
  /** Within a kill or its grace (a window's `end` includes the grace). */
  const inFault = (t: number) => windows.some((w) => t >= w.start && t <= w.end);
  let quietMsTotal = 0;
  const startMs = Date.now();
  const endMs = startMs + runMs;
  let stopping = false;

  const watched = (): Watched[] => [
    ...cluster.processes
      .filter((p) => p.child.exitCode === null && p.child.signalCode === null && p.child.pid)
      .map((p) => ({ name: `${p.name}#${p.child.pid}`, pid: p.child.pid as number, url: p.url })),
    ...cluster.nats.nodes.flatMap((n) => {
      const pid = n.server?.process.pid;
      return pid ? [{ name: `${n.name}#${pid}`, pid, url: null, judge: false }] : [];
    }),
    // Reported only: it keeps every sequence of every client for the final check (8 arrays that
    // grow with the run), so its memory grows by design.
    { name: `soak-clients#${process.pid}`, pid: process.pid, url: null, judge: false },
  ];
  const sampler = startSampler(watched, SAMPLE_MS);
  const caller = (async () => {
    for (let i = 0; !stopping; i++) {
      const url = rpcUrls[i % rpcUrls.length] as string;
      const method = i % 2 ? 'md_coins' : 'md_midPrice';
      const params = i % 2 ? [] : [{ coin: 'BTC' }];
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method, params }),
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      const status = res?.status ?? 0;
      rpc.calls++;
      rpc.by_status[status] = (rpc.by_status[status] ?? 0) + 1;
      if (status >= 500 && !inFault(Date.now())) rpc.fivexx_outside_faults++;
      await sleep(200);
    }
  })();

  try {
    // Faults one after another until the run's time is up and every fault has run once.
    while (Date.now() < endMs || faults.length < faultList.length) {
      const fault = faultList[faults.length % faultList.length] as (typeof faultList)[number];
      const window = { start: Date.now(), end: Number.POSITIVE_INFINITY };
      if (fault.destructive) windows.push(window);
      progress(`fault: ${fault.name}`);
      let detail: unknown;
      let wrong: string[];
      try {
        detail = await fault.inject();
        wrong = fault.judge(detail);
      } catch (err) {
        detail = { error: (err as Error).message };
        wrong = [`failed to inject: ${(err as Error).message}`];
      }
      const injected = Date.now();
      faults.push({
        at_s: Math.round((window.start - startMs) / 1_000),
        took_s: Math.round((injected - window.start) / 1_000),
        fault: fault.name,
        detail,
        wrong,
      });
      if (wrong.length) progress(`  wrong: ${wrong.join('; ')}`);
      if (fault.destructive) {
        window.end = injected + FAULT_GRACE_MS;
        await sleep(FAULT_GRACE_MS);
      }
      await sleep(quietMs);
      quietMsTotal += quietMs;
    }
    // The end: the producer stops, every client must reach the log's end holding each sequence once.
    const producer = cluster.processes.find((p) => p.name === 'producer-sim');
    producer?.child.kill('SIGTERM');
    await producer?.exited;
    const end = await lastSeqOfMd(nats);
    const deadline = Date.now() + DRAIN_MS;
    while (clients.some((c) => c.reader.last() < end) && Date.now() < deadline) await sleep(100);
    stopping = true;
    await Promise.all([sampler.stop(), caller]);
    const expected = seqRange(from, end);
    const results = clients.map(({ transport, reader: r }) => {
      const seen = new Set(r.seqs);
      const soak = 'causes' in r ? r : null;
      const serverErrors = (r.serverErrorsAt ?? []).filter((t) => !inFault(t)).length;
      return {
        transport,
        events: r.seqs.length,
        reconnects: r.reconnects,
        missing: expected.filter((s) => !seen.has(s)).length,
        repeated: r.seqs.length - seen.size,
        // Sequences the wire carried that are not the run's (at or before its start, after its end).
        outside: [...seen].filter((q) => q <= from || q > end).length,
        in_order: r.seqs.every((s, i) => i === 0 || s > (r.seqs[i - 1] as number)),
        server_errors_outside_faults: serverErrors,
        ...(soak ? { reconnect_causes: soak.causes } : {}),
      };
    });
    const processes = sampler.report(startMs, Date.now());
    // Under 10 minutes V8's heap is still settling: drift is reported, not judged.
    const memoryJudged = minutes >= 10;
    const flat =
      !memoryJudged ||
      processes.every(
        (p) =>
          !p.judged ||
          ((p.rss_drift === null || Math.abs(p.rss_drift) <= 0.1) &&
            (p.fds_drift === null || Math.abs(p.fds_drift) <= 0.1)),
      );
    const exact = results.every((c) => c.missing === 0 && c.repeated === 0 && c.outside === 0 && c.in_order);
    const serverErrors = results.reduce((n, c) => n + c.server_errors_outside_faults, 0);
    const faultsRight = faults.every((f) => f.wrong.length === 0);
    return {
      pass: flat && exact && faultsRight && rpc.fivexx_outside_faults === 0 && serverErrors === 0,
      minutes,
      took_s: Math.round((Date.now() - startMs) / 1_000),
      quiet_s: Math.round(quietMsTotal / 1_000),
      memory_judged: memoryJudged,
      events: end - from,
      faults_right: faultsRight,
      faults,
      clients: results,
      jsonrpc: rpc,
      processes,
    };
  } finally {
    stopping = true;
    await sampler.stop();
    for (const c of clients) c.reader.stop();
    accounts.stop();
    await nats.nc.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const flag = (name: string) => {
    const at = argv.indexOf(name);
    return at < 0 ? undefined : Number(argv[at + 1]);
  };
  const minutes = flag('--minutes') ?? Number(process.env.SOAK_MINUTES ?? 2);
  const quietS = flag('--quiet-s');
  run(minutes, quietS === undefined ? QUIET_MS : quietS * 1_000)
    .then((result) => {
      process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
      process.exit(result.pass ? 0 : 1);
    })
    .catch((err) => {
      process.stderr.write(
        `soak failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
      process.exit(1);
    });
}
