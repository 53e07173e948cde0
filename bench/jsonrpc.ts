/**
 * JSON-RPC edge benchmark (`npm run bench -- jsonrpc`). Two figures, each against a baseline
 * measured in the same run by the same client: a bare fastify route (`POST /`) answering the very
 * bytes the edge answered for the same request.
 *
 * 1. `md_midPrice` at 1,000 calls/s (open loop: calls are sent on schedule whatever the answers
 *    do, and latency runs from the scheduled send, so a stall is not hidden), one call per request.
 *    Goal: p50 ≤ 1 ms (the spec says under 50 ms) and ≤ 1.5× the bare route's p50.
 * 2. A batch of 100 `md_midPrice` calls, one batch at a time. Goal: p50 ≤ 10 ms and ≤ 1.5× bare.
 *
 * The edge runs the service's guard (a Quant key: cached after the first call, no rate-limit I/O)
 * and its own live tail fed by a steady book publisher (BENCH_BOOKS_PER_S, default 40 over four
 * coins), so the answers change while measured. Each server in a worker process of its own, both
 * up at once; this process runs nats-server, the publisher and the client (keep-alive `http`).
 * The measurement alternates in rounds (BENCH_ROUNDS, default 5): single calls edge then bare,
 * then batches in alternating blocks of BENCH_BATCH_BLOCK (default 10), so a machine that slows
 * down for a while slows both sides: the p50s are over every round's samples, and each round's
 * pair of p50s is listed too.
 * Environment: BENCH_SCALE (default 1) scales durations; BENCH_RATE (1,000), BENCH_MEASURE_S (10,
 * over all rounds), BENCH_WARMUP_S (2), BENCH_BATCHES (1,000, over all rounds), BENCH_ROUNDS (5),
 * BENCH_BATCH_BLOCK (10) override single parameters; BENCH_SERVER_NODE_ARGS passes node flags to the server workers
 * (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
import { cpus } from 'node:os';
import { startTestAccounts } from '../test/support/accounts.ts';
import { testConfig } from '../test/support/gateway.ts';
import { publishBooks } from './lib/books.ts';
import { COINS, startBenchNats } from './lib/feed.ts';
import { Histogram, type LatencySummary } from './lib/histogram.ts';
import { paced, post } from './lib/http-post.ts';
import { startWorker } from './lib/ipc.ts';
import type { ProcSnapshot } from './lib/proc-stats.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const RATE = Number(process.env.BENCH_RATE ?? 1_000);
const MEASURE_S = Number(process.env.BENCH_MEASURE_S ?? 10 * SCALE);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 2 * SCALE);
const BATCHES = Number(process.env.BENCH_BATCHES ?? Math.round(1_000 * SCALE));
const BOOKS_PER_S = Number(process.env.BENCH_BOOKS_PER_S ?? 40);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 5)));
const BATCH_BLOCK = Math.max(1, Math.round(Number(process.env.BENCH_BATCH_BLOCK ?? 10)));
const SERVER_NODE_ARGS = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);

const nowNs = () => Number(process.hrtime.bigint());
const call = (id: number, coin: string) => ({ jsonrpc: '2.0', id, method: 'md_midPrice', params: [coin] });
const single = (i: number) => JSON.stringify(call(i, COINS[i % COINS.length] as string));
const batch = (i: number) =>
  JSON.stringify(Array.from({ length: 100 }, (_, k) => call(i * 100 + k, COINS[k % COINS.length] as string)));

/** One batch at a time, `n` times (batch numbers from `first`): latency of each, in µs. */
async function sequential(url: string, headers: Record<string, string>, n: number, first = 0) {
  const h = new Histogram();
  let errors = 0;
  for (let i = first; i < first + n; i++) {
    const t = nowNs();
    const a = await post(url, batch(i), headers);
    if (a.status !== 200 || !a.body.startsWith('[')) errors++;
    h.record((nowNs() - t) / 1_000);
  }
  return { h, errors };
}

const ms = (s: LatencySummary) => ({
  p50_ms: s.p50 / 1_000,
  p90_ms: s.p90 / 1_000,
  p99_ms: s.p99 / 1_000,
  max_ms: s.max / 1_000,
  count: s.count,
});

type Measured = {
  single: ReturnType<typeof ms> & { errors: number; achieved_per_s: number };
  batch: ReturnType<typeof ms> & { errors: number };
  proc: ProcSnapshot;
};

type Side = {
  url: string;
  worker: { call<T>(cmd: string, args?: unknown): Promise<T> };
  single: Histogram;
  batch: Histogram;
  errors: { single: number; batch: number };
  achieved: number[];
};

const side = (url: string, worker: Side['worker']): Side => ({
  url,
  worker,
  single: new Histogram(),
  batch: new Histogram(),
  errors: { single: 0, batch: 0 },
  achieved: [],
});

/** One round of one side's single calls at RATE; returns the round's p50 (ms). */
async function singles(s: Side, headers: Record<string, string>) {
  const p = await paced(s.url, headers, RATE, MEASURE_S / ROUNDS, single);
  s.single.merge(p.h);
  s.errors.single += p.errors;
  s.achieved.push(p.achieved_per_s);
  return p.h.summary().p50 / 1_000;
}

/**
 * One round of batches, the two sides alternating in short blocks (BATCH_BLOCK batches of the
 * edge, as many of the bare route, …): a VM that speeds up or slows down for a while moves both,
 * and within a block each batch follows the one before at once, so what a server does after
 * answering (its hooks, its GC) still delays the next as it does for a client sending batch after
 * batch. Returns the round's two p50s (ms).
 */
async function batches(sides: [Side, Side], headers: Record<string, string>) {
  const n = Math.max(1, Math.round(BATCHES / ROUNDS));
  const round = sides.map(() => new Histogram());
  for (let i = 0; i < n; i += BATCH_BLOCK)
    for (const [k, s] of sides.entries()) {
      const b = await sequential(s.url, headers, Math.min(BATCH_BLOCK, n - i), i);
      (round[k] as Histogram).merge(b.h);
      s.errors.batch += b.errors;
    }
  for (const [k, s] of sides.entries()) s.batch.merge(round[k] as Histogram);
  return round.map((h) => h.summary().p50 / 1_000);
}

/** Warms both sides, then alternates rounds: edge, bare, edge, bare, ... */
async function measure(sides: [Side, Side], headers: Record<string, string>) {
  for (const s of sides) {
    await paced(s.url, headers, RATE, WARMUP_S, single);
    await sequential(s.url, headers, Math.max(10, Math.round(BATCHES / 10)));
    await s.worker.call('resetProc');
  }
  type Round = { single_p50_ms: number; batch_p50_ms: number };
  const rounds: { edge: Round; bare: Round }[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const edge = await singles(sides[0], headers);
    const bare = await singles(sides[1], headers);
    const [edgeBatch, bareBatch] = await batches(sides, headers);
    rounds.push({
      edge: { single_p50_ms: edge, batch_p50_ms: edgeBatch as number },
      bare: { single_p50_ms: bare, batch_p50_ms: bareBatch as number },
    });
  }
  const done = async (s: Side): Promise<Measured> => ({
    single: {
      ...ms(s.single.summary()),
      errors: s.errors.single,
      achieved_per_s: Math.round(s.achieved.reduce((a, b) => a + b, 0) / s.achieved.length),
    },
    batch: { ...ms(s.batch.summary()), errors: s.errors.batch },
    proc: await s.worker.call<ProcSnapshot>('proc'),
  });
  return { edge: await done(sides[0]), bare: await done(sides[1]), rounds };
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const config = testConfig();
  const accounts = await startTestAccounts(bench.nats, config);
  const { key } = await accounts.key('quant');
  const headers = { 'x-api-key': key };
  const stopBooks = publishBooks(bench.nats, BOOKS_PER_S);
  try {
    process.stderr.write('[bench] edge\n');
    const edgeWorker = await startWorker('jsonrpc-server', { nodeArgs: SERVER_NODE_ARGS });
    const edgeUrl = await edgeWorker.call<string>('edge', {
      natsUrl: bench.url,
      secret: config.API_KEY_SECRET,
    });
    const first = await post(edgeUrl, single(0), headers);
    if (first.status !== 200 || !first.body.includes('"result"'))
      throw new Error(`edge answered ${first.status} ${first.body}`);
    // The bytes the bare route answers: what the edge answers for each kind of request.
    const bodies = {
      single: (await post(edgeUrl, single(1), headers)).body,
      batch: (await post(edgeUrl, batch(1), headers)).body,
    };
    process.stderr.write('[bench] bare fastify route\n');
    const bareWorker = await startWorker('jsonrpc-server', { nodeArgs: SERVER_NODE_ARGS });
    const bareUrl = await bareWorker.call<string>('bare', { bodies });
    process.stderr.write(`[bench] ${ROUNDS} alternating rounds\n`);
    const { edge, bare, rounds } = await measure(
      [side(edgeUrl, edgeWorker), side(bareUrl, bareWorker)],
      headers,
    ).finally(async () => {
      await edgeWorker.close();
      await bareWorker.close();
    });

    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    return {
      benchmark: 'jsonrpc',
      machine: { cpus: cpus().length, node: process.version },
      parameters: {
        rate_per_s: RATE,
        measure_s: MEASURE_S,
        batches: BATCHES,
        rounds: ROUNDS,
        books_per_s: BOOKS_PER_S,
        body_bytes: { single: bodies.single.length, batch: bodies.batch.length },
      },
      md_midPrice_at_rate: {
        edge: edge.single,
        bare: bare.single,
        p50_vs_bare: ratio(edge.single.p50_ms, bare.single.p50_ms),
        goal: { p50_ms: 1, p50_vs_bare: 1.5 },
        met: edge.single.p50_ms <= 1 && edge.single.p50_ms <= 1.5 * bare.single.p50_ms,
      },
      batch_of_100: {
        edge: edge.batch,
        bare: bare.batch,
        p50_vs_bare: ratio(edge.batch.p50_ms, bare.batch.p50_ms),
        goal: { p50_ms: 10, p50_vs_bare: 1.5 },
        met: edge.batch.p50_ms <= 10 && edge.batch.p50_ms <= 1.5 * bare.batch.p50_ms,
      },
      // Every alternating round (judged by the aggregates above, as every benchmark's `runs`).
      runs: rounds.map((r) => ({
        ...r,
        md_midPrice_p50_vs_bare: ratio(r.edge.single_p50_ms, r.bare.single_p50_ms),
        batch_p50_vs_bare: ratio(r.edge.batch_p50_ms, r.bare.batch_p50_ms),
      })),
      server_proc: { edge: edge.proc, bare: bare.proc },
    };
  } finally {
    await stopBooks();
    accounts.stop();
    await bench.cleanup();
  }
}
