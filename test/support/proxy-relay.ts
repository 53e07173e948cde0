/**
 * A stand-in for a balancer with `send-proxy-v2` (HAProxy): a TCP relay on a free port of
 * 127.0.0.1 that opens a connection to the gateway for each client connection, writes a PROXY
 * v2 header naming `claim` as the client (none when `claim` is absent: a plain trusted hop), then
 * pipes both ways. `localAddress` picks the address the relay connects from (127.0.0.2: a peer
 * that is not in TRUSTED_PROXIES; Linux loopback accepts any 127/8 source). Real clients (fetch,
 * EventSource, ws, grpc-js) connect to the relay unchanged, as they would to the balancer.
 */
import { connect, createServer, type Socket } from 'node:net';

export type ProxyRelay = { port: number; url: string; close(): Promise<void> };

/** The PROXY v2 header of a TCP/IPv4 connection from `source` (port 40000) to 127.0.0.1:`port`. */
export function proxyV2Header(source: string, port: number): Buffer {
  const h = Buffer.alloc(28);
  Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(h);
  h[12] = 0x21; // version 2, command PROXY
  h[13] = 0x11; // AF_INET, STREAM
  h.writeUInt16BE(12, 14);
  Buffer.from(source.split('.').map(Number)).copy(h, 16);
  Buffer.from([127, 0, 0, 1]).copy(h, 20);
  h.writeUInt16BE(40_000, 24);
  h.writeUInt16BE(port, 26);
  return h;
}

export async function startProxyRelay(
  targetPort: number,
  opts: { claim?: string; localAddress?: string } = {},
): Promise<ProxyRelay> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({
      port: targetPort,
      host: '127.0.0.1',
      ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
    });
    if (opts.claim) upstream.write(proxyV2Header(opts.claim, targetPort));
    for (const s of [client, upstream]) {
      open.add(s);
      s.setNoDelay(true); // as a balancer does: no Nagle delay on each small HTTP/2 frame
      s.on('error', () => {});
      s.on('close', () => {
        open.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
