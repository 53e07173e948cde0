/**
 * `npm run bench -- grpc`: the gRPC edge against bare baselines, in the same run (one process,
 * one private nats-server; JSON on stdout). The edge runs with the open guard (guard costs are
 * `bench/guard.ts`'s), so what is measured is the edge itself.
 * - GetMidPrice at 1,000 calls/s for GRPC_BENCH_SECONDS: p50/p99 vs a bare grpc-js server
 *   answering the same message from memory (goal ≤ 1.5×; spec target p50 < 10 ms).
 * - StreamEvents publish → client (publish_us → receipt) p50/p99 with 1 and 100 streams at
 *   1,000 events/s vs a raw JetStream ordered consumer (goal ≤ 1.3× at 1 stream).
 * - Catch-up: GRPC_BENCH_CATCHUP stored events (default 200,000; the issue's figure is 1M) read
 *   from after_seq 0 by one stream, events/s vs a raw ordered consumer (goal ≥ 0.7×).
 */
import { Server, ServerCredentials, type ServiceError } from '@grpc/grpc-js';
import { openGuard } from '../gateways/core/guard.ts';
import { LatestState } from '../gateways/core/latest-state.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { buildGrpcApp } from '../gateways/grpc/app.ts';
import { packageDefinition, SERVICE_NAME } from '../gateways/grpc/proto.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { collect, keyMetadata, priceClient } from '../test/support/grpc.ts';
import { benchConfig } from './lib/config.ts';
import { fillMdStream, publishAtRate, resetMdStream, startBenchNats } from './lib/feed.ts';
import { Histogram } from './lib/histogram.ts';
import { sleep } from './lib/ipc.ts';

const SECONDS = Number(process.env.GRPC_BENCH_SECONDS ?? 5);
const CATCHUP = Number(process.env.GRPC_BENCH_CATCHUP ?? 200_000);
/** `catchup`: the catch-up phase alone. */
const ONLY = process.env.GRPC_BENCH_ONLY;
const log = createLogger('warn');
const ms = (h: Histogram) => ({
  p50_ms: round(h.percentile(50) / 1_000),
  p99_ms: round(h.percentile(99) / 1_000),
  n: h.count,
});
const round = (x: number) => Math.round(x * 1_000) / 1_000;
const nowUs = () => (performance.timeOrigin + performance.now()) * 1_000;

/** `rate` calls/s of `call` for SECONDS; latency of each in µs. */
async function paced(call: () => Promise<void>, rate = 1_000): Promise<Histogram> {
  const h = new Histogram();
  const start = performance.now();
  const total = rate * SECONDS;
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const t0 = performance.now();
    pending.push(call().then(() => h.record((performance.now() - t0) * 1_000)));
  }
  await Promise.all(pending);
  return h;
}

const unaryCall = (client: ReturnType<typeof priceClient>) => () =>
  new Promise<void>((resolve, reject) =>
    client.GetMidPrice({ coin: 'BTC' }, keyMetadata(null), (e: ServiceError | null) =>
      e ? reject(e) : resolve(),
    ),
  );

async function bareServer(mid: Record<string, unknown>): Promise<{ target: string; stop(): void }> {
  const server = new Server();
  const def = packageDefinition[SERVICE_NAME] as never;
  server.addService(def, { GetMidPrice: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, mid) });
  const port = await new Promise<number>((r, j) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
  );
  return { target: `127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

/** publish_us → receipt of `streams` StreamEvents streams while 1,000 events/s are published. */
async function streamLatency(target: string, streams: number) {
  const h = new Histogram();
  const clients = Array.from({ length: Math.min(streams, 10) }, () => priceClient(target));
  const calls = Array.from({ length: streams }, (_, i) => {
    const s = collect(clients[i % clients.length]?.StreamEvents({}, keyMetadata(null)));
    s.call.removeAllListeners('data');
    s.call.on('data', (m: { trade?: { publish_us: number } }) => {
      if (m.trade) h.record(nowUs() - m.trade.publish_us);
    });
    return s;
  });
  await Promise.all(calls.map((s) => new Promise((r) => s.call.once('metadata', r))));
  return { h, calls, clients };
}

/** A gRPC edge (open guard) on its own live tail and latest-state view, with a client. */
async function startEdge(nats: Nats, config: Config) {
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: 60_000,
    expectedCoins: ['BTC'],
  });
  const latest = await LatestState.start(nats, tail, log);
  const app = buildGrpcApp({ config, nats, tail, latest, guard: openGuard, log, region: 'us' });
  const target = `127.0.0.1:${await app.listen('127.0.0.1', 0)}`;
  const client = priceClient(target);
  return {
    tail,
    latest,
    app,
    target,
    client,
    async stop() {
      client.close();
      await app.shutdown();
      latest.stop();
      tail.stop();
    },
  };
}

/**
 * Catch-up: CATCHUP stored events in a fresh MD stream, read from sequence 1 by a raw ordered
 * consumer, then by one StreamEvents stream from after_seq 0 on a fresh edge.
 */
async function catchUpPhase(nats: Nats, config: Config) {
  process.stderr.write(`catch-up of ${CATCHUP}…\n`);
  await resetMdStream(nats);
  await fillMdStream(nats, CATCHUP);
  const catchUp = await startEdge(nats, config);
  const last = (await nats.jsm.streams.info('MD')).state.last_seq;
  let t0 = performance.now();
  let n = 0;
  await new Promise<void>((resolve) => {
    const r = readOrdered(
      nats,
      { stream: 'MD', filter: 'md.>', startSeq: 1 },
      (m) => {
        n++;
        if (m.info.streamSequence >= last) {
          r.stop();
          resolve();
        }
      },
      log,
    );
  });
  const rawPerS = n / ((performance.now() - t0) / 1_000);
  t0 = performance.now();
  const s = collect(catchUp.client.StreamEvents({ after_seq: 0 }, keyMetadata(null)));
  s.call.removeAllListeners('data');
  let got = 0;
  await new Promise<void>((resolve) =>
    s.call.on('data', (m: { trade?: { seq: number } }) => {
      got++;
      if (m.trade && m.trade.seq >= last) resolve();
    }),
  );
  const edgePerS = got / ((performance.now() - t0) / 1_000);
  s.call.cancel();
  await catchUp.stop();
  return {
    events: CATCHUP,
    edge_per_s: Math.round(edgePerS),
    raw_ordered_per_s: Math.round(rawPerS),
    ratio: round(edgePerS / rawPerS),
    goal: '≥ 0.7× raw',
  };
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const { nats } = bench;
  const config = benchConfig({ SSE_MAX_BACKLOG_BYTES: String(64 * 1024 * 1024) });
  if (ONLY === 'catchup') {
    const catchUp = await catchUpPhase(nats, config);
    await bench.cleanup();
    return { catch_up: catchUp };
  }
  await resetMdStream(nats);
  const { tail, latest, app, target, client: edgeClient } = await startEdge(nats, config);
  const { book } = await import('../test/support/publisher.ts');
  const { publishEvents, nowUs: pubUs } = await import('../producers/publish.ts');
  await publishEvents(nats.js, [{ event: book('BTC', 1), id: 'bench-book', ingestUs: pubUs() }], log);
  while (!latest.sourcesOf('BTC').get('synthetic')?.book) await sleep(10);

  process.stderr.write('GetMidPrice…\n');
  const mid = await new Promise<Record<string, unknown>>((r) =>
    edgeClient.GetMidPrice({ coin: 'BTC' }, keyMetadata(null), (_e: unknown, m: Record<string, unknown>) =>
      r(m),
    ),
  );
  const bare = await bareServer(mid);
  const bareClient = priceClient(bare.target);
  await paced(unaryCall(bareClient), 1_000); // warm both
  const bareH = await paced(unaryCall(bareClient));
  const edgeH = await paced(unaryCall(edgeClient));
  bare.stop();

  process.stderr.write('StreamEvents latency…\n');
  const live: Record<string, unknown> = {};
  for (const streams of [1, 100]) {
    const { h, calls, clients } = await streamLatency(target, streams);
    const pub = publishAtRate(nats, 1_000);
    await sleep(SECONDS * 1_000);
    await pub.stop();
    for (const c of calls) c.call.cancel();
    for (const c of clients) c.close();
    live[`streams_${streams}`] = ms(h);
  }
  const rawH = new Histogram();
  const raw = readOrdered(
    nats,
    { stream: 'MD', filter: 'md.>', startSeq: (await nats.jsm.streams.info('MD')).state.last_seq + 1 },
    (m) => {
      const o = JSON.parse(new TextDecoder().decode(m.data.subarray(m.data.indexOf(123)))) as {
        publish_us?: number;
      };
      if (o.publish_us) rawH.record(nowUs() - o.publish_us);
    },
    log,
  );
  const pub = publishAtRate(nats, 1_000);
  await sleep(SECONDS * 1_000);
  await pub.stop();
  raw.stop();

  // The edge of the live phases read the MD stream that is now replaced: a fresh tail and edge
  // start on the filled stream, as a gateway would (a tail across a deleted stream is not a case).
  edgeClient.close();
  bareClient.close();
  await app.shutdown();
  latest.stop();
  tail.stop();
  const catchUp = await catchUpPhase(nats, config);
  await bench.cleanup();
  const e = ms(edgeH);
  const b = ms(bareH);
  const l1 = live.streams_1 as ReturnType<typeof ms>;
  const r = ms(rawH);
  return {
    get_mid_price_1000_per_s: {
      edge: e,
      bare_grpc_js: b,
      p50_ratio: round(e.p50_ms / b.p50_ms),
      goal: 'p50 ≤ 1 ms and ≤ 1.5× bare',
    },
    stream_events_1000_ev_per_s: {
      ...live,
      raw_ordered_consumer: r,
      p50_ratio_1_stream: round(l1.p50_ms / r.p50_ms),
      goal: '≤ 1.3× raw at 1 stream',
    },
    catch_up: catchUp,
  };
}
