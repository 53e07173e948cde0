/**
 * `npm run bench -- disksync`: the disk-sync WebSocket edge against a raw ordered JetStream
 * consumer, in the same run (one process, one private nats-server; JSON on stdout). The edge runs
 * with the open guard (no key, no lease: guard costs are `bench/guard.ts`'s), the real `ws` client.
 * - Catch-up: DISKSYNC_BENCH_CATCHUP stored events (default 200,000; the issue's figure is 1M)
 *   read from `from_seq` 0 by one connection, in `json` and in `msgpack`, until the stream's
 *   last event: events/s and MB/s (data-frame bytes) vs a raw ordered consumer reading the same
 *   stored messages (MB/s of stored bytes), measured before and after the edge runs; the ratio
 *   is against the faster raw run (goal ≥ 0.8×). The client does not decode the frames (it finds
 *   each frame's last `seq` by bytes), and runs twice: in the bench process (sharing the edge's
 *   event loop, as the raw consumer does) and in a process of its own (as in production).
 *   Beside them, the edge's own work without its transport (`edge_work_without_transport`): the
 *   same history read with each event's JSON and, for msgpack, its transcoding, and nothing else.
 * - Live: publish → client (`publish_us` → receipt) p50/p99 at 1,000 events/s, windows of
 *   DISKSYNC_BENCH_SECONDS (default 5), one `json` connection vs a raw consumer of the kind the
 *   edge's tail is (`readOrdered`: ordered pull consumer, no acks, on the tail's connection, in
 *   this process) which parses each event's JSON as the client parses each data frame (goal
 *   ≤ 1.3×). The events are published from a process of their own, as the platform's producers
 *   publish (LIVE_BENCH_PUBLISHER=bench: from this one; bench/lib/live-latency.ts). The raw side
 *   runs with no edge at all: a fresh tail and edge are started for each edge window and
 *   stopped after; beside them the floor of the transport, the raw consumer relayed by a bare
 *   `ws` server to a client in this process, and between floor and edge, the edge's own live tail
 *   relayed by that bare server (`tailRelayed`). DISKSYNC_BENCH_ROUNDS rounds
 *   (default 5), order reversed every other round, after a warm-up window of each
 *   (bench/lib/rounds.ts): medians over rounds. Then the fan-out: DISKSYNC_BENCH_CONNECTIONS (100
 *   and 1,000) connections, clients in a process of their own, against a bare `ws` relay at as many
 *   (bench/lib/fanout.ts), at min(1,000, 50,000 ÷ N) events/s (`fanoutRate`); goal p50 ≤ 1.5× the relay's.
 *   DISKSYNC_BENCH_ONLY=live runs the live phase alone, =catchup the catch-up alone.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { Encoding } from '../contracts/disksync.ts';
import { storedJsonWithSeq } from '../contracts/event-wire.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { EVERYTHING } from '../gateways/core/selection.ts';
import { disksyncSettings } from '../gateways/disksync/app.ts';
import { jsonToMsgpack } from '../gateways/disksync/json-msgpack.ts';
import { KeyLeases } from '../gateways/disksync/lease.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { listenOpenDisksync } from '../test/support/disksync.ts';
import { benchConfig } from './lib/config.ts';
import { connect, edgeCatchUp, type Rate, rate, start } from './lib/disksync-catchup-client.ts';
import { fanoutPhase } from './lib/fanout.ts';
import { type BenchNats, fillMdStream, resetMdStream, startBenchNats } from './lib/feed.ts';
import { Histogram } from './lib/histogram.ts';
import { startWorker } from './lib/ipc.ts';
import { type LiveFeed, type Relay, rawLive, relayedLive, startLiveFeed } from './lib/live-latency.ts';
import { compareInRounds } from './lib/rounds.ts';

const SECONDS = Number(process.env.DISKSYNC_BENCH_SECONDS ?? 5);
const CATCHUP = Number(process.env.DISKSYNC_BENCH_CATCHUP ?? 200_000);
const ROUNDS = Number(process.env.DISKSYNC_BENCH_ROUNDS ?? 5);
/** Connection counts of the fan-out comparison (bench/lib/fanout.ts). */
const CONNECTIONS = (process.env.DISKSYNC_BENCH_CONNECTIONS ?? '100,1000').split(',').map(Number);
/** `live`: the live phase alone; `catchup`: the catch-up alone. */
const ONLY = process.env.DISKSYNC_BENCH_ONLY;
const log = createLogger('warn');
const round = (x: number) => Math.round(x * 1_000) / 1_000;
/**
 * Reads MD from sequence 1 to `last`, counting `bytesOf` each message: with nats.js's consume (the
 * raw baseline) or paced over the history connection (the edge's catch-up read).
 */
function readMd(
  nats: Nats,
  last: number,
  paced: boolean,
  bytesOf: (data: Uint8Array, seq: number) => number,
): Promise<Rate> {
  const t0 = start();
  let n = 0;
  let bytes = 0;
  return new Promise((resolve) => {
    const onMessage = (m: { data: Uint8Array }, seq: number) => {
      n++;
      bytes += bytesOf(m.data, seq);
      if (seq >= last) {
        r.stop();
        resolve(rate(n, bytes, t0));
      }
    };
    const from = { stream: 'MD', filter: 'md.>', startSeq: 1 };
    const r = paced
      ? readOrdered(nats, { ...from, paced: true }, onMessage, log)
      : readOrdered(nats, from, onMessage, log);
  });
}

/** The raw baseline: an ordered consumer reading MD's stored bytes. */
const rawCatchUp = (nats: Nats, last: number) => readMd(nats, last, false, (data) => data.length);

/**
 * The edge's own work without its transport: the history read the edge's catch-up makes (paced,
 * over the history connection), each event's JSON with its `seq`, and for msgpack its transcoding;
 * no sink, no frame, no socket. What the edge takes above this is its transport's.
 */
const readAndEncode = (nats: Nats, last: number, encoding: Encoding) =>
  readMd(nats, last, true, (data, seq) => {
    const json = storedJsonWithSeq(data, seq);
    return encoding === 'msgpack' ? (jsonToMsgpack(json)?.length ?? 0) : json.length;
  });

/**
 * The same catch-up with the client in a process of its own (bench/lib/disksync-catchup-client.ts
 * as a worker): the edge has the event loop to itself, as it does in production, where the client
 * is on another machine.
 */
async function edgeCatchUpApart(url: string, encoding: Encoding, last: number): Promise<Rate> {
  const client = await startWorker('disksync-catchup-client', { env: { DISKSYNC_BENCH_CLIENT: '1' } });
  try {
    return await client.call<Rate>('catchUp', { url, encoding, last }, 600_000);
  } finally {
    await client.close();
  }
}

/** A live tail of the edge's kind, from the stream's end. */
const startTail = (nats: Nats, config: Config) =>
  LiveTail.start(nats, log, { ringSize: config.SSE_RING_SIZE, staleAfterMs: 60_000, expectedCoins: ['BTC'] });

/** A disk-sync edge (open guard) on a live tail of its own; `url` for clients. */
async function startEdge(nats: Nats, config: Config, leases: KeyLeases) {
  const tail = await startTail(nats, config);
  const { url, edge } = await listenOpenDisksync({
    nats,
    tail,
    leases,
    log,
    settings: disksyncSettings(config),
  });
  return {
    url,
    async stop() {
      await edge.shutdown();
      tail.stop();
    },
  };
}

/** publish_us → receipt on `n` live connections of a fresh edge while 1,000 events/s are published. */
async function edgeLive(
  feed: LiveFeed,
  nats: Nats,
  config: Config,
  leases: KeyLeases,
  n: number,
): Promise<Histogram> {
  const h = new Histogram();
  const edge = await startEdge(nats, config, leases);
  const sockets = await Promise.all(Array.from({ length: n }, () => connect(edge.url)));
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.on('message', (data: Buffer) => {
            if (data[0] === 0x5b) {
              const t = feed.now();
              for (const e of JSON.parse(data.toString()) as { publish_us?: number }[])
                if (e.publish_us) h.record(t - e.publish_us);
            } else if ((JSON.parse(data.toString()) as { type: string }).type === 'caught_up') resolve();
          });
          ws.send(JSON.stringify({ op: 'subscribe', id: 'l' }));
        }),
    ),
  );
  await feed.window();
  for (const ws of sockets) ws.close();
  await edge.stop();
  return h;
}

/**
 * The floor: a bare `ws` server sending each stored event as a text frame, and its client (which
 * reads a one-event array when `array`, as the edge's client reads a data message).
 */
async function bareWsRelay(received: (publishUs: number) => void, array = false): Promise<Relay> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`);
  client.on('message', (data: Buffer) => {
    if (array)
      for (const e of JSON.parse(data.toString()) as { publish_us: number }[]) received(e.publish_us);
    else received((JSON.parse(data.toString()) as { publish_us: number }).publish_us);
  });
  const [server] = await accepted;
  return {
    send: (json) => server.send(json, { binary: false }),
    close: () => {
      client.close();
      wss.close();
    },
  };
}

/**
 * Between the floor and the edge: the edge's live tail (each event decoded, its JSON with `seq`
 * made) handing each event straight to the bare `ws` server as a one-event array, with none of the
 * edge's session, sink, flush or message list. Above the floor: the tail's cost; below the edge:
 * the rest of the edge's pipeline.
 */
async function tailRelayed(feed: LiveFeed, nats: Nats, config: Config): Promise<Histogram> {
  const h = new Histogram();
  const relay = await bareWsRelay((publishUs) => h.record(feed.now() - publishUs), true);
  const tail = await startTail(nats, config);
  const detach = tail.attach({
    selection: EVERYTHING,
    lastSeq: 0,
    deliver: (ev) => relay.send(Buffer.from(`[${ev.json}]`)),
  });
  await feed.window();
  detach();
  tail.stop();
  await relay.close();
  return h;
}

/**
 * One connection vs the raw consumer in rounds, beside the raw consumer relayed by a bare `ws`
 * server (the transport's floor in this process) and the edge's tail relayed by it; then the
 * fan-out against a bare relay at 100 and 1,000 connections.
 */
async function livePhase(bench: BenchNats, config: Config, leases: KeyLeases) {
  process.stderr.write('live latency…\n');
  const progress = (line: string) => process.stderr.write(`  ${line}\n`);
  const { nats } = bench;
  const feed = await startLiveFeed(nats, bench.url, SECONDS);
  try {
    const cmp = await compareInRounds(
      {
        raw_ordered_consumer: () => rawLive(feed, nats, log),
        raw_relayed_by_bare_ws: () => relayedLive(feed, nats, log, bareWsRelay),
        tail_relayed_by_bare_ws: () => tailRelayed(feed, nats, config),
        connections_1: () => edgeLive(feed, nats, config, leases, 1),
      },
      ROUNDS,
      progress,
    );
    const fanOut = await fanoutPhase({
      kind: 'disksync',
      feed,
      nats,
      log,
      startEdge: async () => {
        const edge = await startEdge(nats, config, leases);
        return { target: edge.url, stop: edge.stop };
      },
      counts: CONNECTIONS,
      rounds: ROUNDS,
      progress,
    });
    return {
      seconds: SECONDS,
      publisher: feed.publisher,
      ...cmp,
      fan_out: fanOut,
      goal: '≤ 1.3× raw at 1 connection',
    };
  } finally {
    await feed.close();
  }
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const { nats } = bench;
  const config = benchConfig();
  if (ONLY === 'live') {
    await resetMdStream(nats);
    const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
    const live = await livePhase(bench, config, leases);
    await bench.cleanup();
    return { live_1000_ev_per_s: live };
  }
  // The log is filled before the edge's tail starts: a stream deleted under a running tail stalls
  // its first replay while the tail's consumer recovers, which is not what is measured here.
  process.stderr.write(`filling ${CATCHUP}…\n`);
  await resetMdStream(nats);
  const fill = await fillMdStream(nats, CATCHUP);
  const last = (await nats.jsm.streams.info('MD')).state.last_seq;
  const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
  const edge = await startEdge(nats, config, leases);
  const { url } = edge;

  process.stderr.write(`catch-up of ${CATCHUP}…\n`);
  const rawBefore = await rawCatchUp(nats, last);
  const json = await edgeCatchUp(url, 'json', last);
  const msgpack = await edgeCatchUp(url, 'msgpack', last);
  const jsonApart = await edgeCatchUpApart(url, 'json', last);
  const msgpackApart = await edgeCatchUpApart(url, 'msgpack', last);
  const workJson = await readAndEncode(nats, last, 'json');
  const workMsgpack = await readAndEncode(nats, last, 'msgpack');
  const rawAfter = await rawCatchUp(nats, last);
  const rawBest = Math.max(rawBefore.events_per_s, rawAfter.events_per_s);

  await edge.stop();
  const live = ONLY === 'catchup' ? null : await livePhase(bench, config, leases);
  await bench.cleanup();
  return {
    catch_up: {
      stored_events: last,
      fill,
      raw_ordered_consumer: { before: rawBefore, after: rawAfter },
      client_in_bench_process: {
        json: { ...json, ratio_to_raw: round(json.events_per_s / rawBest) },
        msgpack: { ...msgpack, ratio_to_raw: round(msgpack.events_per_s / rawBest) },
      },
      client_in_own_process: {
        json: { ...jsonApart, ratio_to_raw: round(jsonApart.events_per_s / rawBest) },
        msgpack: { ...msgpackApart, ratio_to_raw: round(msgpackApart.events_per_s / rawBest) },
      },
      edge_work_without_transport: {
        json: { ...workJson, ratio_to_raw: round(workJson.events_per_s / rawBest) },
        msgpack: { ...workMsgpack, ratio_to_raw: round(workMsgpack.events_per_s / rawBest) },
      },
      goal: '≥ 0.8× raw events/s',
    },
    live_1000_ev_per_s: live,
  };
}
