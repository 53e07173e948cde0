/**
 * A TCP relay in front of a server whose live connections a test can cut (destroyed on both
 * sides, no close frame, no SSE error: what a dropped network looks like to a client).
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type CutProxy = {
  url: string;
  /** Destroys every open connection; returns how many there were. */
  cut(): number;
  /** Cuts, and refuses (destroys at once) every new connection until `restore()`: the link is down. */
  hold(): number;
  /** Ends `hold()`: new connections are relayed again. */
  restore(): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
};

export async function startCutProxy(target: string): Promise<CutProxy> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  let accepted = 0;
  let held = false;
  const server: Server = createServer((client) => {
    accepted++;
    if (held) {
      client.destroy();
      return;
    }
    const upstream = createConnection({ host: hostname, port: Number(port) });
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  const cut = () => {
    const n = open.size / 2;
    for (const s of [...open]) s.destroy();
    open.clear();
    return n;
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut,
    hold() {
      held = true;
      return cut();
    },
    restore() {
      held = false;
    },
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
