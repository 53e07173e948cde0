/**
 * `npm run bench -- connector`: frames/s a live exchange connector normalizes and publishes, read
 * from a replay server in another process (bench/lib/venue-replay-worker.ts), against publishing
 * the same canonical events directly through the same publish helper, in the same run. Goal:
 * connector ≥ 0.8× direct.
 *
 * Per venue (Binance: trades + diff depth through the local book, 100-level snapshot, top 20
 * published; Hyperliquid: trades + 20-level l2Book snapshots), each repeat:
 * 1. connector: a fresh connector connects to the replay server, which sends every frame as fast
 *    as the socket takes them; timed from the connector's start to the last event stored in MD.
 * 0. raw: a bare `ws` client that only counts the frames: the replay server's delivery ceiling.
 * 2. direct: the events just stored, read back from MD (ordered consumer, the gateways' decoder),
 *    MD purged, then published with `publishEvents` in batches of 1,000 (the connector's batch
 *    bound), timed to the last ack.
 *
 * Environment: BENCH_SCALE (default 1: 50,000 frames per run), BENCH_REPEATS (default 3),
 * BENCH_VENUES (comma list, default binance,hyperliquid).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { MarketEvent } from '../contracts/events.ts';
import { decodeFeedEvent } from '../gateways/core/feed-event.ts';
import { createLogger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { startNatsServer } from '../platform/nats-server.ts';
import { readOrdered } from '../platform/ordered-reader.ts';
import { type ConnectorVenue, startConnector } from '../producers/connectors/connector.ts';
import { nowUs, type Outgoing, publishEvents } from '../producers/publish.ts';
import { connectTestNats } from '../test/support/gateway.ts';
import { benchConfig } from './lib/config.ts';
import { startWorker, type Worker } from './lib/ipc.ts';

const num = (name: string, def: number): number => {
  const n = Number(process.env[name] ?? def);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`);
  return n;
};
const progress = (msg: string) =>
  process.stderr.write(`[bench connector ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const BATCH = 1_000;

async function waitFor(cond: () => boolean, what: string, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Every event stored in MD, in order, as canonical events (stamps and seq removed). */
async function readBack(nats: Nats, count: number): Promise<MarketEvent[]> {
  const out: MarketEvent[] = [];
  const log = createLogger('warn', 'bench');
  const reader = readOrdered(
    nats,
    { stream: 'MD', filter: 'md.>', startSeq: 1 },
    (msg, seq) => {
      const ev = decodeFeedEvent(msg, seq);
      if (!ev) return;
      const { seq: _s, ingest_us: _i, publish_us: _p, ...event } = JSON.parse(ev.json);
      out.push(event as MarketEvent);
    },
    log,
  );
  await waitFor(() => out.length >= count, 'read back');
  reader.stop();
  return out;
}

/** Frames/s a bare `ws` client that only counts receives from the replay worker: the delivery ceiling. */
async function rawDelivery(worker: Worker, venue: ConnectorVenue, frames: number): Promise<number> {
  const { wsUrl, restUrl } = await worker.call<{ wsUrl: string; restUrl: string }>('start', {
    venue,
    frames,
  });
  const subscriptions = venue === 'binance' ? 1 : 2;
  const t0 = performance.now();
  const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
  let n = 0;
  await new Promise<void>((resolve, reject) => {
    ws.on('open', () => {
      for (let i = 0; i < subscriptions; i++) ws.send('{}');
      // As the connector does: the Binance replay holds its flood until the snapshot was served.
      if (venue === 'binance') fetch(`${restUrl}?symbol=BTCUSDT`).then((r) => r.text(), reject);
    });
    ws.on('message', () => {
      if (++n >= frames + subscriptions) resolve();
    });
    ws.on('error', reject);
  });
  const ms = performance.now() - t0;
  ws.terminate();
  await worker.call('stop');
  return Math.round(frames / (ms / 1_000));
}

async function runVenue(nats: Nats, venue: ConnectorVenue, frames: number, repeats: number) {
  const config = benchConfig();
  const log = createLogger('warn', 'bench-connector');
  const worker = await startWorker('venue-replay-worker');
  const runs: {
    connector_fps: number;
    direct_eps: number;
    raw_ws_fps: number;
    connector_cpu_us_per_event: number;
    direct_cpu_us_per_event: number;
  }[] = [];
  try {
    for (let r = 0; r < repeats; r++) {
      await nats.jsm.streams.purge('MD');
      const rawFps = await rawDelivery(worker, venue, frames);
      const { wsUrl, restUrl } = await worker.call<{ wsUrl: string; restUrl: string }>('start', {
        venue,
        frames,
        offset: (r + 1) * 100_000_000,
      });
      const settings = {
        ...config,
        BINANCE_WS_URL: wsUrl,
        BINANCE_REST_URL: restUrl,
        HYPERLIQUID_WS_URL: wsUrl,
      };
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const connector = startConnector(nats, venue, [venue === 'binance' ? 'BTCUSDT' : 'BTC'], settings, log);
      await waitFor(() => connector.stored() >= frames, `${venue} connector stored ${frames}`);
      const connectorMs = performance.now() - t0;
      const connectorCpu = process.cpuUsage(c0);
      await connector.stop();
      await worker.call('stop');

      const events = await readBack(nats, frames);
      await nats.jsm.streams.purge('MD');
      const c1 = process.cpuUsage();
      const t1 = performance.now();
      for (let i = 0; i < events.length; i += BATCH) {
        const batch: Outgoing[] = events
          .slice(i, i + BATCH)
          .map((event, k) => ({ event, id: `direct.${r}.${i + k}`, ingestUs: nowUs() }));
        await publishEvents(nats.js, batch, log);
      }
      const directMs = performance.now() - t1;
      const directCpu = process.cpuUsage(c1);
      const cpuUsPerEvent = (c: NodeJS.CpuUsage) => Math.round(((c.user + c.system) / frames) * 10) / 10;
      const run = {
        connector_fps: Math.round(frames / (connectorMs / 1_000)),
        direct_eps: Math.round(events.length / (directMs / 1_000)),
        raw_ws_fps: rawFps,
        connector_cpu_us_per_event: cpuUsPerEvent(connectorCpu),
        direct_cpu_us_per_event: cpuUsPerEvent(directCpu),
      };
      runs.push(run);
      progress(
        `${venue} run ${r + 1}/${repeats}: connector ${run.connector_fps} frames/s, direct ${run.direct_eps} events/s`,
      );
    }
  } finally {
    await worker.close();
  }
  const connectorFps = median(runs.map((x) => x.connector_fps));
  const directEps = median(runs.map((x) => x.direct_eps));
  return {
    frames_per_run: frames,
    connector_frames_per_s: connectorFps,
    direct_events_per_s: directEps,
    ratio: Math.round((connectorFps / directEps) * 1_000) / 1_000,
    goal: '≥ 0.8',
    runs,
  };
}

export async function run(): Promise<unknown> {
  const frames = Math.round(50_000 * num('BENCH_SCALE', 1));
  const repeats = Math.round(num('BENCH_REPEATS', 3));
  const venues = (process.env.BENCH_VENUES ?? 'binance,hyperliquid')
    .split(',')
    .map((v) => v.trim()) as ConnectorVenue[];
  const store = mkdtempSync(join(tmpdir(), 'bench-connector-'));
  const server = await startNatsServer({ storeDir: store });
  const nats = await connectTestNats(server.url, benchConfig());
  const results: Record<string, unknown> = {};
  try {
    for (const venue of venues) {
      progress(`${venue}: ${frames} frames × ${repeats}`);
      results[venue] = await runVenue(nats, venue, frames, repeats);
    }
  } finally {
    await nats.nc.close();
    await server.stop();
    rmSync(store, { recursive: true, force: true });
  }
  return {
    benchmark: 'connector',
    machine: { cpus: cpus().length, loadavg: loadavg().map((x) => Math.round(x * 100) / 100) },
    method:
      'median of repeats; connector: start → last event stored, frames sent by a replay server in another process; direct: the same events via publishEvents in batches of 1,000',
    ...results,
  };
}
