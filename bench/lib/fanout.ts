/**
 * The edges' fan-out comparison (issue 29): publish → client latency on N live streams of an edge
 * (gRPC `StreamEvents` or disk-sync WebSocket connections) against the bare relay of the same
 * transport at the same N, fed by a raw ordered consumer of MD: a grpc-js server writing each
 * event to every call (grpc-js encoding it per call), or a `ws` server sending each stored event
 * to every socket. The N clients run in a process of their own (bench/lib/fanout-client.ts), the
 * same code for both sides, so the bench process holds the edge or the relay and nothing else.
 * Rounds alternate the sides (bench/lib/rounds.ts); the rate is chosen per N (`fanoutRate`) so
 * that the bare relay is not itself saturated, and is reported, with each side's CPU time in this
 * process per delivery (the edge or the relay, and the NATS read feeding it).
 */

import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Metadata, Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { type WebSocket, WebSocketServer } from 'ws';
import { noDelay } from '../../gateways/grpc/no-delay.ts';
import { http2ServersOf } from '../../gateways/grpc/ping-guard.ts';
import { packageDefinition, SERVICE_NAME } from '../../gateways/grpc/proto.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { FanoutKind, FanoutOpen } from './fanout-client.ts';
import { Histogram, type SerializedHistogram } from './histogram.ts';
import { startWorker } from './ipc.ts';
import { type LiveFeed, readWindow } from './live-latency.ts';
import { compareInRounds } from './rounds.ts';

const round2 = (x: number) => Math.round(x * 100) / 100;

/** An edge under test: where its clients connect, and how it stops. */
export type FanoutEdge = { target: string; stop(): Promise<void> };
type BareRelay = { target: string; send(json: Uint8Array): void; close(): void };

async function bareGrpcFanout(): Promise<BareRelay> {
  const server = new Server();
  const calls = new Set<ServerWritableStream<unknown, unknown>>();
  server.addService(packageDefinition[SERVICE_NAME] as never, {
    StreamEvents: (call: ServerWritableStream<unknown, unknown>) => {
      calls.add(call);
      call.on('cancelled', () => calls.delete(call));
      call.sendMetadata(new Metadata());
    },
  });
  const port = await new Promise<number>((r, j) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? j(e) : r(p))),
  );
  // Nagle off, as the edge has it: with it on, a relay's small writes wait for delayed ACKs.
  for (const h2 of http2ServersOf(server)) noDelay(h2);
  const decoder = new TextDecoder();
  return {
    target: `127.0.0.1:${port}`,
    send(json) {
      const trade = JSON.parse(decoder.decode(json)) as unknown;
      for (const call of calls) call.write({ trade });
    },
    close: () => server.forceShutdown(),
  };
}

async function bareWsFanout(): Promise<BareRelay> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await once(wss, 'listening');
  const sockets = new Set<WebSocket>();
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.once('close', () => sockets.delete(ws));
  });
  return {
    target: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    send(json) {
      for (const ws of sockets) ws.send(json, { binary: false });
    },
    close() {
      for (const ws of sockets) ws.terminate();
      wss.close();
    },
  };
}

/**
 * Deliveries a second the fan-out offers (FANOUT_BENCH_DELIVERIES, default 50,000): at most 1,000
 * events/s, fewer at high counts. At 100,000 a second (the former budget) the bare `ws` relay at
 * 1,000 connections kept this process 95–99 % busy on the 2-core VM, so its p50 swung from 9.5 ms to
 * 284 ms with the queue that forms at saturation, and a ratio to it measured the swing.
 */
export const fanoutRate = (n: number): number =>
  Math.max(1, Math.min(1_000, Math.floor(Number(process.env.FANOUT_BENCH_DELIVERIES ?? 50_000) / n)));

/** Runs a side's window; records the CPU time this process spent in it per delivery (µs). */
async function withCpu(window: () => Promise<Histogram>, perDelivery: number[]): Promise<Histogram> {
  const before = process.cpuUsage();
  const h = await window();
  const used = process.cpuUsage(before);
  perDelivery.push((used.user + used.system) / Math.max(1, h.count));
  return h;
}

export async function fanoutPhase(o: {
  kind: FanoutKind;
  feed: LiveFeed;
  nats: Nats;
  log: Logger;
  startEdge: () => Promise<FanoutEdge>;
  counts: readonly number[];
  rounds: number;
  progress: (line: string) => void;
}) {
  const clients = await startWorker('fanout-client', { env: { FANOUT_BENCH_CLIENT: '1' } });
  const offsetUs = o.feed.offsetFor(await clients.call<number>('skew'));
  const open = (target: string, n: number, edge: boolean) =>
    clients.call('start', { kind: o.kind, target, n, offsetUs, edge } satisfies FanoutOpen, 120_000);
  const collect = async () => Histogram.from(await clients.call<SerializedHistogram>('stop', {}, 60_000));
  const out: Record<string, unknown> = {};
  try {
    for (const n of o.counts) {
      const perSecond = fanoutRate(n);
      const cpu: Record<'bare_relay' | 'edge', number[]> = { bare_relay: [], edge: [] };
      o.progress(`${o.kind} fan-out: ${n} streams at ${perSecond} events/s, edge vs bare relay`);
      const cmp = await compareInRounds(
        {
          bare_relay: async () => {
            const relay = o.kind === 'grpc' ? await bareGrpcFanout() : await bareWsFanout();
            await open(relay.target, n, false);
            const h = await withCpu(async () => {
              await readWindow(o.feed, o.nats, o.log, (m) => relay.send(m.data), perSecond);
              return collect();
            }, cpu.bare_relay);
            relay.close();
            return h;
          },
          edge: async () => {
            const edge = await o.startEdge();
            await open(edge.target, n, true);
            const h = await withCpu(async () => {
              await o.feed.window(perSecond);
              return collect();
            }, cpu.edge);
            await edge.stop();
            return h;
          },
        },
        o.rounds,
        o.progress,
      );
      const ratio = cmp.p50_ratio.edge ?? null;
      out[`streams_${n}`] = {
        events_per_s: perSecond,
        deliveries_per_s: perSecond * n,
        ...cmp,
        ratio_p50_vs_bare_relay: ratio,
        goal: '≤ 1.5× the bare relay (p50)',
        goal_met: ratio !== null && ratio <= 1.5,
        edge_p50_ms: cmp.sides.edge?.p50_ms,
        bare_p50_ms: cmp.sides.bare_relay?.p50_ms,
        // Every window's, the warm-up's first: whether a side was near its CPU bound.
        cpu_us_per_delivery: { bare_relay: cpu.bare_relay.map(round2), edge: cpu.edge.map(round2) },
      };
    }
  } finally {
    await clients.close();
  }
  return { clients: 'N streams in a process of their own (bench/lib/fanout-client.ts)', ...out };
}
