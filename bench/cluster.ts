/**
 * `npm run bench -- cluster`: the unified SSE edge on the local cluster (app/cluster-topology.ts:
 * 3 nats-server nodes, R3 streams, real `gateway unified` processes with the real guard), events
 * published at BENCH_RATE (1,000/s) throughout. For one replica, then two (clients split evenly),
 * client counts rise through BENCH_STEPS; at each, after BENCH_WARMUP_S (10), publish → client latency
 * over BENCH_MEASURE_S (clients in their own process, bench/lib/sse-clients.ts). The figure per
 * replica count: the most clients held with p99 under BENCH_P99_LIMIT_MS (100) and no gap or
 * duplicate. Quant keys, 100 streams each (the tier's cap, counted across replicas).
 * Progress on stderr, the result as JSON on stdout.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startLocalCluster } from '../app/cluster-topology.ts';
import { startTestAccounts } from '../test/support/accounts.ts';
import { connectTestNats, testConfig } from '../test/support/gateway.ts';
import { publishAtRate } from './lib/feed.ts';
import type { LatencySummary } from './lib/histogram.ts';
import { sleep, startWorker } from './lib/ipc.ts';

const env = (name: string, def: string) => process.env[name] ?? def;
const progress = (msg: string) => process.stderr.write(`[cluster] ${msg}\n`);
const STREAMS_PER_KEY = 100;

type Step = {
  clients: number;
  events_per_s: number;
  latency_ms: { p50: number; p99: number; max: number };
  gaps: number;
  duplicates: number;
  closed: number;
  held: boolean;
};

export async function run() {
  const rate = Number(env('BENCH_RATE', '1000'));
  const steps = env('BENCH_STEPS', '100,200,400,800,1200,1600').split(',').map(Number);
  const warmupS = Number(env('BENCH_WARMUP_S', '10'));
  const measureS = Number(env('BENCH_MEASURE_S', '10'));
  const limitMs = Number(env('BENCH_P99_LIMIT_MS', '100'));
  const dir = mkdtempSync(join(tmpdir(), 'mdp-bench-cluster-'));
  const config = testConfig({ STREAM_REPLICAS: '3' });
  progress('starting 3 NATS nodes and 2 unified gateway processes …');
  const cluster = await startLocalCluster({
    baseDir: dir,
    edges: ['unified'],
    regions: ['us'],
    workers: 0,
    producer: false,
    env: { NODE_ENV: 'test', API_KEY_SECRET: config.API_KEY_SECRET },
  });
  const nats = await connectTestNats(cluster.nats.url, config);
  const accounts = await startTestAccounts(nats, config);
  const urls = cluster.processes.map((p) => `${p.url}?coin=BTC,ETH,SOL,HYPE`);
  const clients = await startWorker('sse-clients', { nodeArgs: ['--max-old-space-size=4096'] });
  const publisher = publishAtRate(nats, rate);
  const measure = async (replicas: number, n: number): Promise<Step> => {
    // Fresh keys per step: the last step's streams may still be releasing their slots.
    const keys: string[] = [];
    for (let i = 0; i < n; i += STREAMS_PER_KEY) keys.push((await accounts.key('quant')).key);
    for (let i = 0; i < n; i += STREAMS_PER_KEY)
      await clients.call('connect', {
        url: urls[(i / STREAMS_PER_KEY) % replicas],
        n: Math.min(STREAMS_PER_KEY, n - i),
        headers: { 'x-api-key': keys[i / STREAMS_PER_KEY] },
      });
    await sleep(warmupS * 1_000);
    await clients.call('reset');
    await sleep(measureS * 1_000);
    const s = await clients.call<{
      events_per_s: number;
      latency_us: LatencySummary;
      gaps: number;
      duplicates: number;
      since_connect: { closed_connections: number };
    }>('snapshot');
    await clients.call('disconnect');
    const ms = (us: number) => Math.round(us / 100) / 10;
    const step: Step = {
      clients: n,
      events_per_s: s.events_per_s,
      latency_ms: { p50: ms(s.latency_us.p50), p99: ms(s.latency_us.p99), max: ms(s.latency_us.max) },
      gaps: s.gaps,
      duplicates: s.duplicates,
      closed: s.since_connect.closed_connections,
      held:
        ms(s.latency_us.p99) < limitMs &&
        s.gaps === 0 &&
        s.duplicates === 0 &&
        s.since_connect.closed_connections === 0,
    };
    progress(`${replicas} replica(s), ${n} clients: ${JSON.stringify(step)}`);
    return step;
  };
  const result: Record<string, { max_clients: number; steps: Step[] }> = {};
  try {
    for (const replicas of [1, 2]) {
      const done: Step[] = [];
      for (const n of steps) {
        const step = await measure(replicas, n).catch((err: Error) => {
          progress(`${replicas} replica(s), ${n} clients: ${err.message}`);
          return null;
        });
        if (!step) break;
        done.push(step);
        if (!step.held) break;
      }
      result[`replicas_${replicas}`] = {
        max_clients: Math.max(0, ...done.filter((s) => s.held).map((s) => s.clients)),
        steps: done,
      };
    }
  } finally {
    await publisher.stop();
    await clients.close();
    accounts.stop();
    await nats.nc.close();
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const one = result.replicas_1?.max_clients ?? 0;
  const two = result.replicas_2?.max_clients ?? 0;
  return {
    machine: { cpus: cpus().length, memory_gb: Math.round(totalmem() / 1024 ** 3), loadavg_1m: loadavg()[0] },
    params: { rate, steps, warmup_s: warmupS, measure_s: measureS, p99_limit_ms: limitMs },
    ...result,
    two_over_one: one > 0 ? Math.round((two / one) * 100) / 100 : null,
  };
}
