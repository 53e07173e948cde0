/**
 * A TCP proxy that stands for a long-distance link on one machine (the inter-region link of
 * `npm run cluster -- --regions us,jp`, the region tests and `bench regions`): every chunk is
 * forwarded `delayMs` after it arrived, in each direction, in order, so a round trip takes twice
 * the delay, and at most a window of bytes is in flight each way (a TCP connection's bound); `cut()`
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

/**
 * Bytes a direction may have in flight (sent, not yet "acknowledged" one round trip later), as a
 * TCP connection's window bounds it: a long link's throughput is at most window ÷ round trip
 * (4 MiB ÷ 160 ms ≈ 26 MB/s at 80 ms each way), which is what makes distance cost a catch-up.
 */
export const DEFAULT_WINDOW_BYTES = 4 * 1_048_576;

/**
 * Forwards `from` to `to`, each chunk `delay()` ms after it arrived, order kept; `from` is paused
 * while `window` bytes are in flight (freed a round trip after each chunk was read).
 */
function pipeDelayed(from: Socket, to: Socket, delay: () => number, window: number): void {
  const queue: { at: number; chunk: Buffer }[] = [];
  let timer: NodeJS.Timeout | null = null;
  let inFlight = 0;
  let paused = false;
  const flush = () => {
    timer = null;
    const now = performance.now();
    while (queue.length > 0 && (queue[0] as { at: number }).at <= now) {
      const { chunk } = queue.shift() as { chunk: Buffer };
      if (!to.destroyed) to.write(chunk);
    }
    if (queue.length > 0) timer = setTimeout(flush, (queue[0] as { at: number }).at - now);
  };
  from.on('data', (chunk: Buffer) => {
    const d = delay();
    queue.push({ at: performance.now() + d, chunk });
    if (!timer) timer = setTimeout(flush, Math.max(0, (queue[0] as { at: number }).at - performance.now()));
    inFlight += chunk.length;
    setTimeout(() => {
      inFlight -= chunk.length;
      if (paused && inFlight < window) {
        paused = false;
        from.resume();
      }
    }, 2 * d);
    if (inFlight >= window && !paused) {
      paused = true;
      from.pause();
    }
  });
  from.on('close', () => {
    // What was sent before the close still arrives, late like the rest, then the close.
    const last = queue.length > 0 ? (queue[queue.length - 1] as { at: number }).at - performance.now() : 0;
    setTimeout(() => to.destroy(), Math.max(0, last) + 1);
  });
}

export async function startDelayProxy(
  target: { host?: string; port: number },
  opts: { delayMs: number; port?: number; windowBytes?: number },
): Promise<DelayProxy> {
  const window = opts.windowBytes ?? DEFAULT_WINDOW_BYTES;
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
    pipeDelayed(client, upstream, delay, window);
    pipeDelayed(upstream, client, delay, window);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  proxy.port = typeof address === 'object' && address ? address.port : 0;
  return proxy;
}
