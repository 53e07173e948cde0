/**
 * `npm run bench -- grpc`: the gRPC edge against bare baselines, in the same run (one process,
 * one private nats-server; JSON on stdout). The edge runs with the open guard (guard costs are
 * `bench/guard.ts`'s), so what is measured is the edge itself.
 * - GetMidPrice at 1,000 calls/s, windows of GRPC_BENCH_SECONDS: p50/p99 vs a bare grpc-js
 *   server (no options, no interceptor) answering the message the edge answers, from memory; the
 *   same client code, metadata and pacing for both (goal ≤ 1.5×; spec target p50 < 10 ms).
 * - StreamEvents publish → client (publish_us → receipt) p50/p99 with 1 stream at 1,000 events/s
 *   vs a raw JetStream consumer of the kind the edge's tail is (`readOrdered`: ordered pull
 *   consumer, no acks, on the tail's connection, in this process), which decodes each JSON
 *   payload as the client decodes each protobuf message (goal ≤ 1.3×), the events published from
 *   a process of their own (LIVE_BENCH_PUBLISHER=bench: from this one; bench/lib/live-latency.ts);
 *   the edge's client runs in the bench process and, as a third side, in a process of its own
 *   (bench/lib/grpc-live-client.ts, where its decoding does not share the edge's event loop, as in
 *   production). The raw side runs with no edge at all (the edge, with its own tail, is started for each of its windows and stopped
 *   after), so the baseline pays for nothing of the edge.
 * - Fan-out: GRPC_BENCH_STREAMS (100 and 1,000) StreamEvents streams, clients in a process of their
 *   own, against a bare grpc-js relay at as many (bench/lib/fanout.ts), at min(1,000, 50,000 ÷ N)
 *   events/s; goal p50 ≤ 1.5× the relay's. GRPC_BENCH_ONLY=fanout runs it alone.
 * - Both comparisons: GRPC_BENCH_ROUNDS rounds (default 5) of one window per side, order reversed
 *   every other round, after a warm-up window of each (bench/lib/rounds.ts): medians over rounds.
 *   GRPC_BENCH_ONLY=unary|live|catchup runs one phase alone.
 * - Catch-up: GRPC_BENCH_CATCHUP stored events (default 200,000; the issue's figure is 1M) read
 *   from after_seq 0 by one stream, events/s vs a raw ordered consumer that counts its messages
 *   (goal ≥ 0.7×; against the faster of a raw run before and after). Client runs, all reported:
 *   a grpc-js client decoding every FeedMessage, one reading each seq from the bytes (first and
 *   last decoded and checked), and one doing so on a stream opened with `batch: true` (each
 *   `FeedMessage.batch` walked by bytes), each in the bench process (sharing the edge's CPU) and
 *   in a process of its own (as in production); GRPC_BENCH_CLIENTS picks some (default: the
 *   first two kinds, both places; `here:batch`, `apart:batch` add the third), GRPC_BENCH_WINDOW
 *   sets the client's HTTP/2 receive window (bench/lib/grpc-catchup-client.ts).
 */
import { Server, ServerCredentials, type ServerWritableStream, type ServiceError } from '@grpc/grpc-js';
import { openGuard } from '../gateways/core/guard.ts';
import { LatestState } from '../gateways/core/latest-state.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { buildGrpcApp } from '../gateways/grpc/app.ts';
import { packageDefinition, SERVICE_NAME } from '../gateways/grpc/proto.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { keyMetadata, priceClient } from '../test/support/grpc.ts';
import { benchConfig } from './lib/config.ts';
import { fanoutPhase } from './lib/fanout.ts';
import { type BenchNats, fillMdStream, resetMdStream, startBenchNats } from './lib/feed.ts';
import {
  type CatchUpRequest,
  type CatchUpResult,
  type ClientKind,
  catchUp as catchUpClient,
} from './lib/grpc-catchup-client.ts';
import { streamTrades } from './lib/grpc-live-client.ts';
import { Histogram, type SerializedHistogram } from './lib/histogram.ts';
import { sleep, startWorker, type Worker } from './lib/ipc.ts';
import { type LiveFeed, type Relay, rawLive, relayedLive, startLiveFeed } from './lib/live-latency.ts';
import { compareInRounds } from './lib/rounds.ts';

const SECONDS = Number(process.env.GRPC_BENCH_SECONDS ?? 5);
const CATCHUP = Number(process.env.GRPC_BENCH_CATCHUP ?? 200_000);
/** `unary`, `live` or `catchup`: that phase alone. */
const ONLY = process.env.GRPC_BENCH_ONLY;
const ROUNDS = Number(process.env.GRPC_BENCH_ROUNDS ?? 5);
/** Stream counts of the fan-out comparison (the event rate at each: bench/lib/fanout.ts `fanoutRate`). */
const STREAMS = (process.env.GRPC_BENCH_STREAMS ?? '100,1000').split(',').map(Number);
/** The catch-up client's HTTP/2 receive window in bytes (0: grpc-js's default, 64 KiB). */
const WINDOW = Number(process.env.GRPC_BENCH_WINDOW ?? 0);
/** Where the catch-up client runs and what it decodes; GRPC_BENCH_CLIENTS=here:bytes,apart:decode… picks. */
const CLIENT_RUNS = (process.env.GRPC_BENCH_CLIENTS ?? 'here:decode,here:bytes,apart:decode,apart:bytes')
  .split(',')
  .map((s) => s.split(':') as ['here' | 'apart', ClientKind]);
const log = createLogger('warn');
const round = (x: number) => Math.round(x * 1_000) / 1_000;

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

/** Binds a bare server on a free loopback port, in plaintext; its target. */
async function bindLocal(server: Server): Promise<string> {
  const port = await new Promise<number>((r, j) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
  );
  return `127.0.0.1:${port}`;
}

async function bareServer(mid: Record<string, unknown>): Promise<{ target: string; stop(): void }> {
  const server = new Server();
  const def = packageDefinition[SERVICE_NAME] as never;
  server.addService(def, { GetMidPrice: (_c: unknown, cb: (e: null, r: unknown) => void) => cb(null, mid) });
  return { target: await bindLocal(server), stop: () => server.forceShutdown() };
}

/**
 * The floor: a bare grpc-js server of the same service whose StreamEvents writes each stored event
 * as a `FeedMessage{trade}` (grpc-js encoding it), and a grpc-js client decoding them.
 */
async function bareGrpcRelay(received: (publishUs: number) => void): Promise<Relay> {
  const server = new Server();
  const opened = new Promise<ServerWritableStream<unknown, unknown>>((resolve) =>
    server.addService(packageDefinition[SERVICE_NAME] as never, { StreamEvents: resolve }),
  );
  const client = priceClient(await bindLocal(server));
  const stream = streamTrades(client, received);
  const call = await opened;
  const decoder = new TextDecoder();
  return {
    send: (json) => call.write({ trade: JSON.parse(decoder.decode(json)) }),
    close: () => {
      stream.cancel();
      client.close();
      server.forceShutdown();
    },
  };
}

/** publish_us → receipt on `streams` StreamEvents streams of a fresh edge while 1,000 events/s are published. */
async function edgeLive(feed: LiveFeed, nats: Nats, config: Config, streams: number): Promise<Histogram> {
  const h = new Histogram();
  const edge = await startEdge(nats, config);
  const clients = Array.from({ length: Math.min(streams, 10) }, () => priceClient(edge.target));
  const calls = Array.from({ length: streams }, (_, i) =>
    streamTrades(clients[i % clients.length] as ReturnType<typeof priceClient>, (publishUs) =>
      h.record(feed.now() - publishUs),
    ),
  );
  await Promise.all(calls.map((call) => new Promise((r) => call.once('metadata', r))));
  await feed.window();
  for (const call of calls) call.cancel();
  for (const c of clients) c.close();
  await edge.stop();
  return h;
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

/** The raw baseline: an ordered consumer counting MD's messages from sequence 1 to `last`. */
function rawCatchUp(nats: Nats, last: number): Promise<{ events_per_s: number; seconds: number }> {
  const t0 = performance.now();
  let n = 0;
  return new Promise((resolve) => {
    const r = readOrdered(
      nats,
      { stream: 'MD', filter: 'md.>', startSeq: 1 },
      (m) => {
        n++;
        if (m.info.streamSequence >= last) {
          r.stop();
          const seconds = (performance.now() - t0) / 1_000;
          resolve({ events_per_s: Math.round(n / seconds), seconds: round(seconds) });
        }
      },
      log,
    );
  });
}

/** The catch-up client in a process of its own (bench/lib/grpc-catchup-client.ts as a worker). */
async function catchUpApart(request: CatchUpRequest): Promise<CatchUpResult> {
  const client = await startWorker('grpc-catchup-client', { env: { GRPC_BENCH_CLIENT: '1' } });
  try {
    return await client.call<CatchUpResult>('catchUp', request, 600_000);
  } finally {
    await client.close();
  }
}

/**
 * Catch-up: CATCHUP stored events in a fresh MD stream, read from sequence 1 by a raw ordered
 * consumer (before and after the edge runs; the ratio is against the faster), and by one
 * StreamEvents stream from after_seq 0 on one edge in this process, with a client that decodes
 * every message and one that reads each seq from the bytes (bench/lib/grpc-catchup-client.ts),
 * each in this process and in a process of its own.
 */
async function catchUpPhase(nats: Nats, config: Config) {
  process.stderr.write(`filling ${CATCHUP}…\n`);
  await resetMdStream(nats);
  await fillMdStream(nats, CATCHUP);
  const catchUp = await startEdge(nats, config);
  const last = (await nats.jsm.streams.info('MD')).state.last_seq;
  process.stderr.write(`catch-up of ${last}…\n`);
  const request = (kind: ClientKind): CatchUpRequest => ({
    target: catchUp.target,
    kind,
    last,
    window: WINDOW,
  });
  const rawBefore = await rawCatchUp(nats, last);
  progress(`raw ${rawBefore.events_per_s}/s`);
  const runs = new Map<string, CatchUpResult>();
  for (const [where, kind] of CLIENT_RUNS) {
    const r = where === 'apart' ? await catchUpApart(request(kind)) : await catchUpClient(request(kind));
    progress(
      `${kind} client ${where === 'apart' ? 'in its own process' : 'in the bench process'}: ${r.events_per_s}/s`,
    );
    runs.set(`${where}:${kind}`, r);
  }
  const rawAfter = await rawCatchUp(nats, last);
  progress(`raw ${rawAfter.events_per_s}/s`);
  await catchUp.stop();
  const rawBest = Math.max(rawBefore.events_per_s, rawAfter.events_per_s);
  const row = (where: string, kind: ClientKind) => {
    const r = runs.get(`${where}:${kind}`);
    return r
      ? { events_per_s: r.events_per_s, seconds: r.seconds, ratio: round(r.events_per_s / rawBest) }
      : null;
  };
  return {
    events: last,
    client_http2_window: WINDOW || 'grpc-js default (64 KiB)',
    raw_ordered_consumer: { before: rawBefore, after: rawAfter },
    client_in_bench_process: {
      decoding: row('here', 'decode'),
      bytes_seq_only: row('here', 'bytes'),
      batched_bytes: row('here', 'batch'),
    },
    client_in_own_process: {
      decoding: row('apart', 'decode'),
      bytes_seq_only: row('apart', 'bytes'),
      batched_bytes: row('apart', 'batch'),
    },
    goal: '≥ 0.7× raw',
  };
}

const progress = (line: string) => process.stderr.write(`  ${line}\n`);

/** GetMidPrice on the edge vs a bare grpc-js server answering the same message, in rounds. */
async function unaryPhase(nats: Nats, config: Config) {
  process.stderr.write('GetMidPrice…\n');
  await resetMdStream(nats);
  const edge = await startEdge(nats, config);
  const { book } = await import('../test/support/publisher.ts');
  const { publishEvents, nowUs: pubUs } = await import('../producers/publish.ts');
  await publishEvents(nats.js, [{ event: book('BTC', 1), id: 'bench-book', ingestUs: pubUs() }], log);
  while (!edge.latest.sourcesOf('BTC').get('synthetic')?.book) await sleep(10);
  const mid = await new Promise<Record<string, unknown>>((r) =>
    edge.client.GetMidPrice({ coin: 'BTC' }, keyMetadata(null), (_e: unknown, m: Record<string, unknown>) =>
      r(m),
    ),
  );
  const bare = await bareServer(mid);
  const bareClient = priceClient(bare.target);
  const cmp = await compareInRounds(
    { bare_grpc_js: () => paced(unaryCall(bareClient)), edge: () => paced(unaryCall(edge.client)) },
    ROUNDS,
    progress,
  );
  bareClient.close();
  bare.stop();
  await edge.stop();
  return { ...cmp, goal: 'p50 ≤ 1 ms and ≤ 1.5× bare' };
}

/** One stream of a fresh edge, its client in a process of its own (bench/lib/grpc-live-client.ts). */
async function edgeLiveApart(feed: LiveFeed, nats: Nats, config: Config, client: Worker): Promise<Histogram> {
  const edge = await startEdge(nats, config);
  const offsetUs = feed.offsetFor(await client.call<number>('skew'));
  await client.call('start', { target: edge.target, offsetUs });
  await feed.window();
  const h = Histogram.from(await client.call<SerializedHistogram>('stop'));
  await edge.stop();
  return h;
}

/**
 * StreamEvents at 1 stream vs a raw ordered consumer, in rounds, with the client in the bench
 * process (sharing the edge's event loop) and in a process of its own, beside the raw consumer
 * relayed by a bare grpc-js server (the transport's floor in this process).
 */
async function livePhase(bench: BenchNats, config: Config) {
  process.stderr.write('StreamEvents latency…\n');
  const { nats } = bench;
  await resetMdStream(nats);
  const feed = await startLiveFeed(nats, bench.url, SECONDS);
  const apart = await startWorker('grpc-live-client', { env: { GRPC_BENCH_LIVE_CLIENT: '1' } });
  try {
    const cmp = await compareInRounds(
      {
        raw_ordered_consumer: () => rawLive(feed, nats, log),
        raw_relayed_by_bare_grpc_js: () => relayedLive(feed, nats, log, bareGrpcRelay),
        streams_1: () => edgeLive(feed, nats, config, 1),
        streams_1_client_apart: () => edgeLiveApart(feed, nats, config, apart),
      },
      ROUNDS,
      progress,
    );
    return {
      seconds: SECONDS,
      publisher: feed.publisher,
      ...cmp,
      goal: '≤ 1.3× raw at 1 stream',
    };
  } finally {
    await apart.close();
    await feed.close();
  }
}

/** StreamEvents at GRPC_BENCH_STREAMS streams against a bare grpc-js relay at as many (bench/lib/fanout.ts). */
async function fanOut(bench: BenchNats, config: Config) {
  await resetMdStream(bench.nats);
  const feed = await startLiveFeed(bench.nats, bench.url, SECONDS);
  try {
    return await fanoutPhase({
      kind: 'grpc',
      feed,
      nats: bench.nats,
      log,
      startEdge: () => startEdge(bench.nats, config),
      counts: STREAMS,
      rounds: ROUNDS,
      progress,
    });
  } finally {
    await feed.close();
  }
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const { nats } = bench;
  const config = benchConfig({ SSE_MAX_BACKLOG_BYTES: String(64 * 1024 * 1024) });
  if (ONLY === 'fanout') {
    const fan = await fanOut(bench, config);
    await bench.cleanup();
    return { fan_out: fan };
  }
  if (ONLY === 'catchup') {
    const catchUp = await catchUpPhase(nats, config);
    await bench.cleanup();
    return { catch_up: catchUp };
  }
  const out: Record<string, unknown> = {};
  if (!ONLY || ONLY === 'unary') out.get_mid_price_1000_per_s = await unaryPhase(nats, config);
  if (!ONLY || ONLY === 'live') out.stream_events_1000_ev_per_s = await livePhase(bench, config);
  if (!ONLY || ONLY === 'live') out.fan_out = await fanOut(bench, config);
  if (ONLY === 'unary' || ONLY === 'live') {
    await bench.cleanup();
    return out;
  }
  const catchUp = await catchUpPhase(nats, config);
  await bench.cleanup();
  return {
    ...out,
    catch_up: catchUp,
  };
}
