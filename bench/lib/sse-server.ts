/**
 * Worker: the server side of the unified benchmark, one of
 * - `gateway`: the real unified gateway (`buildUnifiedApp` + `LiveTail`), optionally with the
 *   `onEventWritten` latency hook;
 * - `bare-latency`: a raw ordered JetStream consumer feeding a bare `http` SSE server that writes
 *   each message to each client on receipt (in-server latency baseline);
 * - `bare-coalesced`: the same consumer feeding a bare SSE server with one buffer per client,
 *   flushed on `setImmediate` (throughput baseline).
 * The bare servers do the work any server must do for a message: splice `seq` into the stored
 * JSON, frame.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import {
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { storedJsonWithSeq } from '../../contracts/event-wire.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { MD_ALL } from '../../contracts/subjects.ts';
import { nowNs } from '../../gateways/core/feed-event.ts';
import { openGuard } from '../../gateways/core/guard.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { replayStats } from '../../gateways/core/replay-source.ts';
import { buildUnifiedApp, type UnifiedApp } from '../../gateways/unified/app.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { benchConfig } from './config.ts';
import { Histogram } from './histogram.ts';
import { serveWorker } from './ipc.ts';
import { ProcStats } from './proc-stats.ts';

export type ServerMode = 'gateway' | 'bare-latency' | 'bare-coalesced';
export type StartArgs = { mode: ServerMode; natsUrl: string; env?: Record<string, string>; hook?: boolean };

const latencyNs = new Histogram();
/** Events taken from JetStream per event-loop turn: how much work one flush has to carry. */
const perTurn = new Histogram();
let turnEvents = 0;
const countTurn = (): void => {
  if (turnEvents++ === 0) setImmediate(endTurn);
};
const endTurn = (): void => {
  perTurn.record(turnEvents);
  turnEvents = 0;
};
const proc = new ProcStats();
let stopFn: (() => Promise<void>) | null = null;
let gateway: UnifiedApp | null = null;
let bareClients: Set<unknown> | null = null;
let bareEvents = 0;

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
};

/** What every server must do with a message: splice `seq` into the stored JSON and frame it. */
function frameOf(msg: JsMsg): string {
  const seq = msg.info.streamSequence;
  return `id: ${seq}\ndata: ${storedJsonWithSeq(msg.data, seq)}\n\n`;
}

async function rawTail(nc: NatsConnection, onMsg: (m: JsMsg) => void): Promise<ConsumerMessages> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(STREAMS.MD);
  const consumer = await jetstream(nc).consumers.get(STREAMS.MD, {
    filter_subjects: MD_ALL,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: info.state.last_seq + 1,
  });
  return consumer.consume({ max_messages: 10_000, callback: onMsg });
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', 1_024, () => {
      const a = server.address();
      resolve(`http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/api/v1/unified/stream`);
    }),
  );
}

async function startGateway(args: StartArgs): Promise<string> {
  const config = benchConfig(args.env);
  const log = createLogger(config.LOG_LEVEL, 'bench-gateway');
  const nats: Nats = await connectNats(
    args.natsUrl,
    'bench-gateway',
    log,
    {},
    {
      historyWire: benchConfig().NATS_HISTORY_WIRE,
    },
  );
  const tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const unified = buildUnifiedApp({
    config,
    nats,
    tail,
    guard: openGuard,
    log,
    region: 'us',
    ...(args.hook ? { onEventWritten: (ns: number) => latencyNs.record(ns) } : {}),
  });
  gateway = unified;
  tail.onDispatched = countTurn;
  const address = await unified.app.listen({ host: '127.0.0.1', port: 0 });
  stopFn = async () => {
    await unified.shutdown();
    tail.stop();
    await nats.nc.close();
  };
  return `${address}/api/v1/unified/stream`;
}

/** Writes each message to each client as it arrives; latency recorded just before each write, as the gateway's hook does. */
async function startBareLatency(args: StartArgs): Promise<string> {
  const nc = await connect({ servers: args.natsUrl, noAsyncTraces: true, name: 'bench-bare-latency' });
  const clients = new Set<ServerResponse>();
  bareClients = clients;
  const server = createServer((req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.socket?.setNoDelay(true);
    res.write('retry: 1000\n\n');
    clients.add(res);
    req.on('close', () => clients.delete(res));
  });
  const messages = await rawTail(nc, (m) => {
    const receivedAtNs = nowNs();
    const frame = frameOf(m);
    bareEvents++;
    countTurn();
    for (const res of clients) {
      if (args.hook) latencyNs.record(nowNs() - receivedAtNs);
      res.write(frame);
    }
  });
  const url = await listen(server);
  stopFn = async () => {
    messages.stop();
    for (const res of clients) res.destroy();
    server.close();
    await nc.close();
  };
  return url;
}

/** One pending buffer per client, flushed once per event-loop turn (setImmediate). */
async function startBareCoalesced(args: StartArgs): Promise<string> {
  const nc = await connect({ servers: args.natsUrl, noAsyncTraces: true, name: 'bench-bare-coalesced' });
  type Client = { res: ServerResponse; parts: string[]; pending: number[] };
  const clients = new Set<Client>();
  bareClients = clients;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const t = args.hook ? nowNs() : 0;
    for (const c of clients) {
      if (c.parts.length === 0) continue;
      const chunk = c.parts.length === 1 ? (c.parts[0] as string) : c.parts.join('');
      c.parts = [];
      if (args.hook) {
        for (const r of c.pending) latencyNs.record(t - r);
        c.pending.length = 0;
      }
      c.res.write(chunk);
    }
  };
  const server = createServer((req, res) => {
    res.writeHead(200, SSE_HEADERS);
    res.socket?.setNoDelay(true);
    res.write('retry: 1000\n\n');
    const c: Client = { res, parts: [], pending: [] };
    clients.add(c);
    req.on('close', () => clients.delete(c));
  });
  const messages = await rawTail(nc, (m) => {
    const receivedAtNs = nowNs();
    const frame = frameOf(m);
    bareEvents++;
    countTurn();
    for (const c of clients) {
      c.parts.push(frame);
      if (args.hook) c.pending.push(receivedAtNs);
    }
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  const url = await listen(server);
  stopFn = async () => {
    messages.stop();
    for (const c of clients) c.res.destroy();
    server.close();
    await nc.close();
  };
  return url;
}

serveWorker(
  {
    async start(args: StartArgs) {
      const url =
        args.mode === 'gateway'
          ? await startGateway(args)
          : args.mode === 'bare-latency'
            ? await startBareLatency(args)
            : await startBareCoalesced(args);
      return { url, pid: process.pid };
    },
    reset() {
      latencyNs.reset();
      perTurn.reset();
      proc.reset();
    },
    /** In-server latency (µs) and process load since the last reset. */
    stats() {
      return {
        latency_us: latencyNs.summary(1_000),
        events_per_turn: perTurn.summary(),
        proc: proc.read(),
        connections: gateway ? gateway.registry.size : (bareClients?.size ?? 0),
        ...(gateway
          ? { max_backlog_bytes: gateway.registry.maxBacklogBytes(), replay: { ...replayStats } }
          : { events_in: bareEvents }),
      };
    },
    async stop() {
      await stopFn?.();
      stopFn = null;
    },
  },
  async () => {
    await stopFn?.();
  },
);
