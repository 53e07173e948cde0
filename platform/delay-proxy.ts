/**
 * A TCP proxy that stands for a long-distance link on one machine (the inter-region link of
 * `npm run cluster -- --regions us,jp` and the region tests): every chunk is forwarded `delayMs`
 * after it arrived, in each direction, in order, so a round trip takes twice the delay; `cut()`
 * drops every connection and refuses new ones (a link down) until `restore()`. The delay can be
 * changed while running; chunks already waiting keep the time they were given.
 */
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export type DelayProxy = {
  /** Where to connect instead of the target (`127.0.0.1:<port>`). */
  readonly port: number;
  delayMs: number;
  readonly isCut: () => boolean;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
};

/** Forwards `from` to `to`, each chunk `delay()` ms after it arrived, order kept. */
function pipeDelayed(from: Socket, to: Socket, delay: () => number): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    timer = null;
    const now = Date.now();
    while (queue.length > 0 && (queue[0] as { at: number }).at <= now) {
      const { chunk } = queue.shift() as { chunk: Buffer };
      if (!to.destroyed) to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(flush, (queue[0] as { at: number }).at - now);
  };
  from.on('data', (chunk: Buffer) => {
    queue.push({ at: Date.now() + delay(), chunk });
    if (!timer) timer = setTimeout(flush, Math.max(0, (queue[0] as { at: number }).at - Date.now()));
  });
  from.on('close', () => {
    // What was sent before the close still arrives, late like the rest, then the close.
    const last = queue.length > 0 ? (queue[queue.length - 1] as { at: number }).at - Date.now() : 0;
    setTimeout(() => to.destroy(), Math.max(0, last) + 1);
  });
}

export async function startDelayProxy(
  target: { host?: string; port: number },
  opts: { delayMs: number; port?: number },
): Promise<DelayProxy> {
  let cut = false;
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const proxy = {
    port: 0,
    delayMs: opts.delayMs,
    isCut: () => cut,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
  };
  const server: Server = createServer((client) => {
    track(client);
    if (cut) return void client.destroy();
    const upstream = tcpConnect(target.port, target.host ?? '127.0.0.1');
    track(upstream);
    const delay = () => proxy.delayMs;
    pipeDelayed(client, upstream, delay);
    pipeDelayed(upstream, client, delay);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  proxy.port = typeof address === 'object' && address ? address.port : 0;
  return proxy;
}
