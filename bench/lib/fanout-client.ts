/**
 * The clients of the edges' fan-out comparison (bench/lib/fanout.ts) in a process of their own
 * (`FANOUT_BENCH_CLIENT=1`, bench/lib/ipc.ts): N gRPC `StreamEvents` streams (at most 50 a
 * connection) or N WebSocket connections, to an edge or to the bare relay of the same transport,
 * timing `publish_us` → receipt of every event on the publisher's clock. Each message is decoded
 * as a client decodes it (grpc-js `FeedMessage`, JSON of a data message), the same for both sides.
 */
import type { Metadata } from '@grpc/grpc-js';
import { WebSocket } from 'ws';
import { ownPriceClient, type priceClient } from '../../test/support/grpc.ts';
import { streamTrades } from './grpc-live-client.ts';
import { Histogram, type SerializedHistogram } from './histogram.ts';
import { serveWorker } from './ipc.ts';
import { clockSkewUs, nowUs } from './live-latency.ts';

export type FanoutKind = 'grpc' | 'disksync';
export type FanoutOpen = { kind: FanoutKind; target: string; n: number; offsetUs: number; edge: boolean };

let open: { h: Histogram; close(): void } | null = null;

async function openGrpc(target: string, n: number, received: (us: number) => void) {
  // At most 50 streams a channel: the edge allows 100 on one HTTP/2 connection (GRPC_MAX_CONCURRENT_STREAMS).
  const channels = Math.max(Math.min(n, 10), Math.ceil(n / 50));
  const clients = Array.from({ length: channels }, () => ownPriceClient(target));
  const calls = Array.from({ length: n }, (_, i) =>
    streamTrades(clients[i % clients.length] as ReturnType<typeof priceClient>, received),
  );
  await Promise.all(calls.map((c) => new Promise((r) => c.once('metadata', (_m: Metadata) => r(null)))));
  return () => {
    for (const c of calls) c.cancel();
    for (const c of clients) c.close();
  };
}

/** One WebSocket; resolves once it takes live events (the edge: `caught_up`; a bare relay: open). */
function openWs(url: string, edge: boolean, received: (us: number) => void): Promise<WebSocket> {
  const ws = new WebSocket(`${url}/`, { perMessageDeflate: false });
  return new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', (data: Buffer) => {
      const v = JSON.parse(data.toString()) as
        | { publish_us?: number; type?: string }
        | { publish_us?: number }[];
      if (Array.isArray(v)) {
        for (const e of v) if (e.publish_us) received(e.publish_us);
      } else if (v.publish_us) received(v.publish_us);
      else if (v.type === 'caught_up') resolve(ws);
    });
    ws.once('open', () => {
      if (edge) ws.send(JSON.stringify({ op: 'subscribe', id: 'l' }));
      else resolve(ws);
    });
  });
}

async function start(o: FanoutOpen): Promise<void> {
  if (open) throw new Error('already open');
  const h = new Histogram();
  const received = (us: number) => h.record(nowUs() + o.offsetUs - us);
  if (o.kind === 'grpc') open = { h, close: await openGrpc(o.target, o.n, received) };
  else {
    const sockets: WebSocket[] = [];
    for (let i = 0; i < o.n; i += 100)
      sockets.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(100, o.n - i) }, () => openWs(o.target, o.edge, received)),
        )),
      );
    open = {
      h,
      close: () => {
        for (const ws of sockets) ws.terminate();
      },
    };
  }
}

function stop(): SerializedHistogram {
  if (!open) throw new Error('nothing open');
  const { h, close } = open;
  open = null;
  close();
  return h.serialize();
}

if (process.env.FANOUT_BENCH_CLIENT === '1') serveWorker({ start, stop, skew: clockSkewUs });
