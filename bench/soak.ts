/**
 * `npm run soak -- --minutes N [--fault-every-s S]` (also `npm run bench -- soak`, SOAK_MINUTES):
 * the local cluster (app/cluster-topology.ts: 3 NATS nodes, the simulator producer at
 * SIM_TRADE_RATE 50/s per coin, two unified and two JSON-RPC US replicas) under steady traffic: four
 * SSE clients resuming by their own position across both unified replicas, JSON-RPC calls on both
 * edges every 200 ms. Every S seconds (default: a quarter of the run, at most 180) one fault, in
 * turn: kill -9 a NATS node (restarted), kill -9 a unified replica (a new one started), a slow
 * client that never reads, a key revoked under an open stream. Every 5 s each process's RSS and
 * open file descriptors (/proc) and its /healthz round-trip (event-loop delay as seen from outside).
 * Pass: after the first quarter (warm-up), each process's RSS and handles within ±10 % (mean of
 * the last quarter against the second; judged from 10-minute runs on, shorter ones only report
 * it), no lost or repeated sequence on any client, no 5xx from JSON-RPC outside the 15 s after a
 * fault. A process started during the run (a replaced replica) is judged only if it ran from the
 * first quarter on. Prints the result as JSON; exit code 1 when it fails.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AppProcess, startLocalCluster } from '../app/cluster-topology.ts';
import { startTestAccounts } from '../test/support/accounts.ts';
import { type ResumingReader, resumingReader, seqRange } from '../test/support/cluster.ts';
import { connectTestNats, testConfig } from '../test/support/gateway.ts';
import { openSse } from '../test/support/sse.ts';
import { sleep } from './lib/ipc.ts';

const progress = (msg: string) => process.stderr.write(`[soak] ${msg}\n`);
const SAMPLE_MS = 5_000;
const FAULT_GRACE_MS = 15_000;

type Sample = { t: number; rss_mb: number; fds: number; healthz_ms: number | null };

function procSample(pid: number): { rss_mb: number; fds: number } | null {
  try {
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return { rss_mb: Math.round(Number(rss) / 1024), fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return null;
  }
}

async function roundTrip(url: string): Promise<number | null> {
  const t0 = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(5_000) }).catch(() => null);
  return res?.ok ? Math.round(performance.now() - t0) : null;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

/** Mean of the last quarter over the mean of the second quarter (null: too few samples). */
function drift(
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

export async function run(minutes = Number(process.env.SOAK_MINUTES ?? 2), faultEveryS?: number) {
  const runMs = minutes * 60_000;
  const everyMs = (faultEveryS ?? Math.min(180, (minutes * 60) / 4)) * 1_000;
  const dir = mkdtempSync(join(tmpdir(), 'mdp-soak-'));
  const config = testConfig({ STREAM_REPLICAS: '3' });
  const appEnv = { NODE_ENV: 'test', API_KEY_SECRET: config.API_KEY_SECRET, SIM_TRADE_RATE: '50' };
  progress(`starting the cluster for a ${minutes} min run, a fault every ${everyMs / 1_000} s …`);
  const cluster = await startLocalCluster({
    baseDir: dir,
    edges: ['unified', 'jsonrpc'],
    regions: ['us'],
    workers: 0,
    env: appEnv,
  });
  const nats = await connectTestNats(cluster.nats.url, config);
  const accounts = await startTestAccounts(nats, config);
  const { key } = await accounts.key('quant');
  const unified = () =>
    cluster.processes.filter(
      // A killed replica has no exit code but a signal: both mean gone.
      (p) => p.name.startsWith('unified') && p.child.exitCode === null && p.child.signalCode === null,
    );
  const streamUrls = () => unified().map((p) => p.url as string);
  const rpcUrls = cluster.processes.filter((p) => p.name.startsWith('jsonrpc')).map((p) => p.url as string);

  const from = (await nats.jsm.streams.info('MD')).state.last_seq;
  const readers: ResumingReader[] = [0, 1, 2, 3].map((i) => resumingReader(streamUrls, key, from, i % 2));
  const samples = new Map<string, { pid: number; born: number; samples: Sample[] }>();
  const rpc = { calls: 0, by_status: {} as Record<string, number>, fivexx_outside_faults: 0 };
  const faults: { at_s: number; fault: string; detail?: unknown }[] = [];
  let lastFaultAt = -Infinity;
  const startMs = Date.now();
  const endMs = startMs + runMs;
  let stopping = false;

  const sampler = (async () => {
    while (!stopping) {
      for (const p of cluster.processes) {
        if (p.child.exitCode !== null || p.child.signalCode !== null || !p.child.pid) continue;
        const entry = samples.get(`${p.name}#${p.child.pid}`) ?? {
          pid: p.child.pid,
          born: Date.now(),
          samples: [],
        };
        samples.set(`${p.name}#${p.child.pid}`, entry);
        const s = procSample(p.child.pid);
        const healthz = p.url ? await roundTrip(`${new URL(p.url).origin}/healthz`) : null;
        if (s) entry.samples.push({ t: Date.now(), ...s, healthz_ms: healthz });
      }
      await sleep(SAMPLE_MS);
    }
  })();
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
      if (status >= 500 && Date.now() - lastFaultAt > FAULT_GRACE_MS) rpc.fivexx_outside_faults++;
      await sleep(200);
    }
  })();

  const injectors: [string, () => Promise<unknown>][] = [
    [
      'nats node kill -9',
      async () => {
        const i = faults.length % 3;
        await cluster.nats.kill(i);
        await cluster.nats.start(i);
        return { node: cluster.nats.nodes[i]?.name };
      },
    ],
    [
      'unified replica kill -9',
      async () => {
        const victim = unified()[0] as AppProcess;
        victim.child.kill('SIGKILL');
        await victim.exited;
        const p = await cluster.spawn(`${victim.name}-r${faults.length}`, victim.args, {
          UNIFIED_PORT_US: '0',
        });
        return { killed: victim.name, started: p.name };
      },
    ],
    [
      'slow client',
      async () => {
        const url = streamUrls()[0] as string;
        const ended = await new Promise<boolean>((resolve) => {
          const req = get(url, { headers: { 'x-api-key': key } }, (res) => {
            res.pause();
            res.once('close', () => resolve(true));
            setTimeout(
              () => {
                req.destroy();
                resolve(false);
              },
              Math.min(everyMs / 2, 60_000),
            ).unref();
          });
          req.on('error', () => resolve(true));
        });
        return { ended_by_server: ended };
      },
    ],
    [
      'key revoked under an open stream',
      async () => {
        const k = await accounts.key('pro');
        let ended = false;
        const sse = await openSse(streamUrls()[0] as string, () => {}, { 'x-api-key': k.key });
        const done = sse.done.then(() => (ended = true));
        const t0 = Date.now();
        await accounts.service.revokeKey(k.accountId, k.keyId);
        await Promise.race([done, sleep(15_000)]);
        sse.abort();
        return { status: sse.status, ended, ms: Date.now() - t0 };
      },
    ],
  ];

  try {
    let next = startMs + everyMs;
    while (Date.now() < endMs) {
      await sleep(Math.max(0, Math.min(next, endMs) - Date.now()));
      if (Date.now() >= endMs) break;
      const [name, inject] = injectors[faults.length % injectors.length] as [string, () => Promise<unknown>];
      lastFaultAt = Date.now();
      progress(`fault: ${name}`);
      const detail = await inject().catch((err: Error) => ({ error: err.message }));
      lastFaultAt = Date.now();
      faults.push({ at_s: Math.round((lastFaultAt - startMs) / 1_000), fault: name, detail });
      next += everyMs;
    }
    // The end: the producer stops, every client must reach the log's end holding each sequence once.
    const producer = cluster.processes.find((p) => p.name === 'producer-sim');
    producer?.child.kill('SIGTERM');
    await producer?.exited;
    const end = (await nats.jsm.streams.info('MD')).state.last_seq;
    const deadline = Date.now() + 60_000;
    while (readers.some((r) => r.last() < end) && Date.now() < deadline) await sleep(100);
    stopping = true;
    await Promise.all([sampler, caller]);
    const expected = seqRange(from, end);
    const clients = readers.map((r) => {
      const seen = new Set(r.seqs);
      return {
        events: r.seqs.length,
        reconnects: r.reconnects,
        missing: expected.filter((s) => !seen.has(s)).length,
        repeated: r.seqs.length - seen.size,
        in_order: r.seqs.every((s, i) => i === 0 || s > (r.seqs[i - 1] as number)),
      };
    });
    const processes = [...samples.entries()].map(([name, e]) => {
      const grown = e.born <= startMs + runMs / 4;
      return {
        process: name,
        samples: e.samples.length,
        rss_mb: { first: e.samples[0]?.rss_mb, last: e.samples.at(-1)?.rss_mb },
        fds: { first: e.samples[0]?.fds, last: e.samples.at(-1)?.fds },
        rss_drift: grown ? drift(e.samples, (s) => s.rss_mb, startMs, endMs) : null,
        fds_drift: grown ? drift(e.samples, (s) => s.fds, startMs, endMs) : null,
        healthz_ms_max: Math.max(0, ...e.samples.map((s) => s.healthz_ms ?? 0)),
      };
    });
    // Under 10 minutes V8's heap is still settling: drift is reported, not judged.
    const memoryJudged = minutes >= 10;
    const flat =
      !memoryJudged ||
      processes.every(
        (p) =>
          (p.rss_drift === null || Math.abs(p.rss_drift) <= 0.1) &&
          (p.fds_drift === null || Math.abs(p.fds_drift) <= 0.1),
      );
    const exact = clients.every((c) => c.missing === 0 && c.repeated === 0 && c.in_order);
    return {
      pass: flat && exact && rpc.fivexx_outside_faults === 0,
      minutes,
      memory_judged: memoryJudged,
      events: end - from,
      faults,
      clients,
      jsonrpc: rpc,
      processes,
    };
  } finally {
    stopping = true;
    for (const r of readers) r.stop();
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
  run(minutes, flag('--fault-every-s'))
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
