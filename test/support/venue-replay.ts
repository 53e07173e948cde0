/**
 * A local stand-in for an exchange: a `ws` WebSocket server that replays recorded venue frames,
 * one script per connection, and an HTTP server for REST depth snapshots.
 *
 * Each connection waits for the client's subscription messages (`subscriptions` of them), then
 * sends its script in order. A script entry is a frame (an object, sent as JSON, or a string, sent
 * as it is) or `{"$wait": name}`: sending pauses until `waits[name]()` resolves (the test waits
 * for what the connector must have done by then, never for a fixed time). Every connection but
 * the last is then dropped (TCP terminated, no close frame: a lost connection); the last stays
 * open and goes quiet. Hyperliquid `ping`s are answered with `pong`.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export type ScriptEntry = Record<string, unknown> | unknown[] | string;

export type ReplayOptions = {
  /** Frames per connection, in order; connections beyond the last replay nothing. */
  sessions: ScriptEntry[][];
  /** Client messages to await before replaying (subscriptions). */
  subscriptions: number;
  waits?: Record<string, () => Promise<unknown>>;
};

export type VenueReplay = {
  url: string;
  /** Messages the connector sent, per connection. */
  received: string[][];
  connections(): number;
  /** Resolves when connection `n` (1-based) has sent its whole script. */
  replayed(n: number): Promise<void>;
  close(): Promise<void>;
};

/** Sends respecting the socket's buffer: waits for the write callback every 256 frames. */
async function sendAll(ws: WebSocket, frames: ScriptEntry[], waits: ReplayOptions['waits']): Promise<void> {
  let pending: Promise<void> = Promise.resolve();
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i] as ScriptEntry;
    if (typeof f === 'object' && !Array.isArray(f) && typeof f.$wait === 'string') {
      await pending;
      const wait = waits?.[f.$wait];
      if (!wait) throw new Error(`no wait named ${f.$wait}`);
      await wait();
      continue;
    }
    const text = typeof f === 'string' ? f : JSON.stringify(f);
    const sent = new Promise<void>((resolve) => ws.send(text, () => resolve()));
    if (i % 256 === 255) await sent;
    pending = sent;
  }
  await pending;
}

export async function startVenueReplay(opts: ReplayOptions): Promise<VenueReplay> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(wss, 'listening');
  const received: string[][] = [];
  const done: { promise: Promise<void>; resolve: () => void }[] = [];
  const doneOf = (n: number) => {
    while (done.length < n) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      done.push({ promise, resolve });
    }
    return done[n - 1] as { promise: Promise<void>; resolve: () => void };
  };
  wss.on('connection', (ws) => {
    const n = received.length + 1;
    const got: string[] = [];
    received.push(got);
    const script = opts.sessions[n - 1] ?? [];
    const last = n >= opts.sessions.length;
    ws.on('error', () => {});
    ws.on('message', (data) => {
      const text = data.toString();
      got.push(text);
      if (text === '{"method":"ping"}') ws.send('{"channel":"pong"}');
      if (got.length !== opts.subscriptions) return;
      sendAll(ws, script, opts.waits)
        .then(() => {
          doneOf(n).resolve();
          if (!last) ws.terminate();
        })
        .catch(() => ws.terminate());
    });
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    received,
    connections: () => received.length,
    replayed: (n) => doneOf(n).promise,
    async close() {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((r) => wss.close(() => r()));
    },
  };
}

export type SnapshotServer = { url: string; served(symbol: string): number; close(): Promise<void> };

/** `GET /depth?symbol=S`: the next of `snapshots[S]` (the last one repeated); 404 for others. */
export async function startSnapshotServer(snapshots: Record<string, unknown[]>): Promise<SnapshotServer> {
  const served = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const symbol = new URL(req.url ?? '/', 'http://x').searchParams.get('symbol') ?? '';
    const list = snapshots[symbol];
    if (!list?.length) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"code":-1121,"msg":"Invalid symbol."}');
      return;
    }
    const n = served.get(symbol) ?? 0;
    served.set(symbol, n + 1);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(list[Math.min(n, list.length - 1)]));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/depth`,
    served: (s) => served.get(s) ?? 0,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
