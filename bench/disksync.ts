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
 * - Live: publish → client (`publish_us` → receipt) p50/p99 at 1,000 events/s, windows of
 *   DISKSYNC_BENCH_SECONDS (default 5), one `json` connection vs a raw consumer of the kind the
 *   edge's tail is (`readOrdered`: ordered pull consumer, no acks, on the publisher's connection,
 *   in this process) which parses each event's JSON as the client parses each data frame (goal
 *   ≤ 1.3×). The raw side runs with no edge at all: a fresh tail and edge are started for each
 *   edge window and stopped after. DISKSYNC_BENCH_ROUNDS rounds (default 5), order reversed every
 *   other round, after a warm-up window of each (bench/lib/rounds.ts): medians over rounds. Then
 *   100 connections once (no goal; their JSON parsing shares this process's CPU with the edge).
 *   DISKSYNC_BENCH_ONLY=live runs the live phase alone, =catchup the catch-up alone.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { unpack } from 'msgpackr';
import WebSocket from 'ws';
import type { Encoding } from '../contracts/disksync.ts';
import { LiveTail } from '../gateways/core/live-tail.ts';
import { disksyncSettings } from '../gateways/disksync/app.ts';
import { KeyLeases } from '../gateways/disksync/lease.ts';
import type { Config } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { listenOpenDisksync } from '../test/support/disksync.ts';
import { benchConfig } from './lib/config.ts';
import { fillMdStream, resetMdStream, startBenchNats } from './lib/feed.ts';
import { Histogram } from './lib/histogram.ts';
import { nowUs, publishWindow, rawLive } from './lib/live-latency.ts';
import { compareInRounds } from './lib/rounds.ts';

const SECONDS = Number(process.env.DISKSYNC_BENCH_SECONDS ?? 5);
const CATCHUP = Number(process.env.DISKSYNC_BENCH_CATCHUP ?? 200_000);
const ROUNDS = Number(process.env.DISKSYNC_BENCH_ROUNDS ?? 5);
/** `live`: the live phase alone; `catchup`: the catch-up alone. */
const ONLY = process.env.DISKSYNC_BENCH_ONLY;
const log = createLogger('warn');
const round = (x: number) => Math.round(x * 1_000) / 1_000;
const ms = (h: Histogram) => ({
  p50_ms: round(h.percentile(50) / 1_000),
  p99_ms: round(h.percentile(99) / 1_000),
  n: h.count,
});
const MB = 1_000_000;

/** `cpu_us_per_event`: this process's CPU (all threads) per event, steadier than events/s under load. */
type Rate = {
  events: number;
  seconds: number;
  events_per_s: number;
  mb_per_s: number;
  cpu_us_per_event: number;
};
const start = () => ({ t0: performance.now(), cpu: process.cpuUsage() });
const rate = (events: number, bytes: number, from: ReturnType<typeof start>): Rate => {
  const seconds = (performance.now() - from.t0) / 1_000;
  const cpu = process.cpuUsage(from.cpu);
  return {
    events,
    seconds: round(seconds),
    events_per_s: Math.round(events / seconds),
    mb_per_s: round(bytes / MB / seconds),
    cpu_us_per_event: round((cpu.user + cpu.system) / events),
  };
};

function connect(url: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url}/`, { maxPayload: 64 * 1024 * 1024, perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** The raw baseline: an ordered consumer reading MD from `startSeq` to `last`. */
function rawCatchUp(nats: Nats, last: number): Promise<Rate> {
  const t0 = start();
  let n = 0;
  let bytes = 0;
  return new Promise((resolve) => {
    const r = readOrdered(
      nats,
      { stream: 'MD', filter: 'md.>', startSeq: 1 },
      (m) => {
        n++;
        bytes += m.data.length;
        if (m.info.streamSequence >= last) {
          r.stop();
          resolve(rate(n, bytes, t0));
        }
      },
      log,
    );
  });
}

const JSON_SEQ = Buffer.from('"seq":');
const MSGPACK_SEQ = Buffer.from([0xa3, 0x73, 0x65, 0x71]); // fixstr "seq"

/** The `seq` of a data frame's last event, found without decoding the frame. */
function lastSeq(data: Buffer, binary: boolean): number {
  if (!binary) {
    const i = data.lastIndexOf(JSON_SEQ);
    return i < 0
      ? -1
      : Number.parseInt(data.toString('latin1', i + JSON_SEQ.length, i + JSON_SEQ.length + 20), 10);
  }
  const i = data.lastIndexOf(MSGPACK_SEQ);
  if (i < 0) return -1;
  const at = i + MSGPACK_SEQ.length;
  const tag = data[at] as number;
  if (tag < 0x80) return tag;
  if (tag === 0xcc) return data.readUInt8(at + 1);
  if (tag === 0xcd) return data.readUInt16BE(at + 1);
  if (tag === 0xce) return data.readUInt32BE(at + 1);
  if (tag === 0xcb) return data.readDoubleBE(at + 1);
  return -1;
}

/**
 * One connection subscribing from `from_seq` 0 until the frame holding the stream's last event
 * (history from the log, then the tail's ring); data-frame bytes counted, no frame decoded but
 * the first and the last (which are checked: the replay starts at 1 and ends at `last`).
 */
async function edgeCatchUp(url: string, encoding: Encoding, last: number): Promise<Rate> {
  const ws = await connect(url);
  let bytes = 0;
  let first: { data: Buffer; binary: boolean } | null = null;
  const t0 = start();
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (data: Buffer, binary: boolean) => {
      if (binary || data[0] === 0x5b /* [ */) {
        bytes += data.length;
        first ??= { data, binary };
        if (lastSeq(data, binary) >= last) resolve();
        return;
      }
      const c = JSON.parse(data.toString()) as { type: string };
      if (c.type === 'error') reject(new Error(data.toString()));
    });
    ws.send(JSON.stringify({ op: 'subscribe', id: 'c', from_seq: 0, encoding }));
  });
  const result = rate(last, bytes, t0);
  ws.close();
  const f = first as { data: Buffer; binary: boolean } | null;
  const events = f ? ((f.binary ? unpack(f.data) : JSON.parse(f.data.toString())) as { seq: number }[]) : [];
  if (events[0]?.seq !== 1) throw new Error(`catch-up started at ${events[0]?.seq}, not 1`);
  return result;
}

/**
 * The same catch-up with the client in a process of its own (this file, forked): the edge has
 * the event loop to itself, as it does in production, where the client is on another machine.
 */
async function edgeCatchUpApart(url: string, encoding: Encoding, last: number): Promise<Rate> {
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, DISKSYNC_BENCH_CLIENT: '1' },
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  const result = new Promise<Rate>((resolve, reject) => {
    child.once('message', (m: Rate | { error: string }) =>
      'error' in m ? reject(new Error(m.error)) : resolve(m),
    );
    child.once('exit', (code) => reject(new Error(`catch-up client exited (${code})`)));
  });
  child.send({ url, encoding, last });
  return result;
}

if (process.env.DISKSYNC_BENCH_CLIENT === '1' && process.send) {
  process.once('message', (m: { url: string; encoding: Encoding; last: number }) => {
    edgeCatchUp(m.url, m.encoding, m.last)
      .then(
        (r) => r as Rate | { error: string },
        (e) => ({ error: String(e) }),
      )
      .then((r) => process.send?.(r, () => process.exit(0)));
  });
}

/** A disk-sync edge (open guard) on a live tail of its own; `url` for clients. */
async function startEdge(nats: Nats, config: Config, leases: KeyLeases) {
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: 60_000,
    expectedCoins: ['BTC'],
  });
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
async function edgeLive(nats: Nats, config: Config, leases: KeyLeases, n: number): Promise<Histogram> {
  const h = new Histogram();
  const edge = await startEdge(nats, config, leases);
  const sockets = await Promise.all(Array.from({ length: n }, () => connect(edge.url)));
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          ws.on('message', (data: Buffer) => {
            if (data[0] === 0x5b) {
              const t = nowUs();
              for (const e of JSON.parse(data.toString()) as { publish_us?: number }[])
                if (e.publish_us) h.record(t - e.publish_us);
            } else if ((JSON.parse(data.toString()) as { type: string }).type === 'caught_up') resolve();
          });
          ws.send(JSON.stringify({ op: 'subscribe', id: 'l' }));
        }),
    ),
  );
  await publishWindow(nats, SECONDS);
  for (const ws of sockets) ws.close();
  await edge.stop();
  return h;
}

/** One connection vs the raw consumer in rounds, then 100 connections once. */
async function livePhase(nats: Nats, config: Config, leases: KeyLeases) {
  process.stderr.write('live latency…\n');
  const progress = (line: string) => process.stderr.write(`  ${line}\n`);
  const cmp = await compareInRounds(
    {
      raw_ordered_consumer: () => rawLive(nats, SECONDS, log),
      connections_1: () => edgeLive(nats, config, leases, 1),
    },
    ROUNDS,
    progress,
  );
  const connections100 = ms(await edgeLive(nats, config, leases, 100));
  return {
    seconds: SECONDS,
    ...cmp,
    connections_100_once: connections100,
    goal: '≤ 1.3× raw at 1 connection',
  };
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const { nats } = bench;
  const config = benchConfig();
  if (ONLY === 'live') {
    await resetMdStream(nats);
    const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
    const live = await livePhase(nats, config, leases);
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
  const rawAfter = await rawCatchUp(nats, last);
  const rawBest = Math.max(rawBefore.events_per_s, rawAfter.events_per_s);

  await edge.stop();
  const live = ONLY === 'catchup' ? null : await livePhase(nats, config, leases);
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
      goal: '≥ 0.8× raw events/s',
    },
    live_1000_ev_per_s: live,
  };
}
