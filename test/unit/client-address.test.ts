/**
 * Whom `clientAddress` believes (gateways/core/client-address.ts), on real sockets of a real
 * server: TRUSTED_PROXIES entries (addresses, CIDR blocks, v4-mapped), a trusted peer's PROXY v2
 * header (sent at once with the request or on its own first), the peer itself when a trusted
 * peer sends none, X-Forwarded-For from a trusted hop only (the rightmost untrusted hop), a broken
 * header closing the connection, an untrusted peer's header left to the HTTP parser (400), and
 * a header ahead of a TLS handshake (the address kept under the TLS socket).
 */
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { generate } from 'selfsigned';
import { afterEach, describe, expect, it } from 'vitest';
import { acceptProxyProtocol, clientAddress, TrustedProxies } from '../../gateways/core/client-address.ts';
import { proxyV2Header } from '../support/proxy-relay.ts';

describe('TrustedProxies', () => {
  it('holds addresses and CIDR blocks, IPv4 and IPv6, and v4-mapped peers', () => {
    const t = new TrustedProxies(['127.0.0.1', '10.0.0.0/8', 'fd00::/8']);
    expect(['127.0.0.1', '::ffff:127.0.0.1', '10.1.2.3', 'fd12::1'].every((a) => t.has(a))).toBe(true);
    expect(['127.0.0.2', '11.0.0.1', 'fe80::1', '', undefined].some((a) => t.has(a))).toBe(false);
  });

  it('refuses what is not an address or a block', () => {
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129'])
      expect(() => new TrustedProxies([bad]), bad).toThrow(/TRUSTED_PROXIES/);
  });
});

let server: Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

/** A server answering each request with the client it sees; `trusted` as TRUSTED_PROXIES. */
async function whoAmIServer(trusted: string[]): Promise<number> {
  server = createServer((req, res) => res.end(clientAddress(req.socket, req.headers)));
  acceptProxyProtocol(server, new TrustedProxies(trusted));
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** Sends `chunks` (one write each, the next after a turn of the event loop); the raw answer. */
async function exchange(port: number, chunks: (string | Buffer)[], localAddress?: string): Promise<string> {
  const sock = connect({ port, host: '127.0.0.1', ...(localAddress ? { localAddress } : {}) });
  let out = '';
  sock.on('data', (d) => {
    out += d.toString('latin1');
  });
  const closed = new Promise((r) => sock.on('close', r));
  sock.on('error', () => {});
  for (const c of chunks) {
    sock.write(c);
    await new Promise((r) => setImmediate(r));
  }
  await closed;
  return out;
}

const request = (headers = '') => `GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}\r\n`;
const body = (raw: string) => raw.split('\r\n\r\n')[1];

describe('acceptProxyProtocol + clientAddress', () => {
  it("takes a trusted peer's PROXY v2 client, in one write with the request or before it", async () => {
    const port = await whoAmIServer(['127.0.0.1']);
    const header = proxyV2Header('203.0.113.7', port);
    expect(body(await exchange(port, [Buffer.concat([header, Buffer.from(request())])]))).toBe('203.0.113.7');
    expect(body(await exchange(port, [header.subarray(0, 5), header.subarray(5), request()]))).toBe(
      '203.0.113.7',
    );
  });

  it('a trusted peer without a header is the client, and its X-Forwarded-For is believed', async () => {
    const port = await whoAmIServer(['127.0.0.1', '10.0.0.0/8']);
    expect(body(await exchange(port, [request()]))).toBe('127.0.0.1');
    // Rightmost hop that is not a trusted proxy: 10.0.0.5 is one, 198.51.100.1 is the client.
    const xff = 'X-Forwarded-For: 6.6.6.6, 198.51.100.1, 10.0.0.5\r\n';
    expect(body(await exchange(port, [request(xff)]))).toBe('198.51.100.1');
  });

  it('X-Forwarded-For behind a PROXY header counts only when that client is itself trusted', async () => {
    const port = await whoAmIServer(['127.0.0.1', '10.0.0.0/8']);
    const xff = 'X-Forwarded-For: 198.51.100.1\r\n';
    const viaUntrusted = proxyV2Header('203.0.113.7', port);
    expect(body(await exchange(port, [viaUntrusted, request(xff)]))).toBe('203.0.113.7');
    const viaTrusted = proxyV2Header('10.0.0.5', port);
    expect(body(await exchange(port, [viaTrusted, request(xff)]))).toBe('198.51.100.1');
  });

  it('an untrusted peer is its own client: its PROXY header reaches the HTTP parser (400), its X-Forwarded-For is ignored', async () => {
    const port = await whoAmIServer(['127.0.0.1']);
    const spoofed = await exchange(port, [proxyV2Header('203.0.113.8', port), request()], '127.0.0.2');
    expect(spoofed).toMatch(/^HTTP\/1\.1 400 /);
    const xff = await exchange(port, [request('X-Forwarded-For: 203.0.113.8\r\n')], '127.0.0.2');
    expect(body(xff)).toBe('127.0.0.2');
  });

  it('a broken header from a trusted peer closes the connection without an answer', async () => {
    const port = await whoAmIServer(['127.0.0.1']);
    const broken = proxyV2Header('203.0.113.7', port);
    broken[12] = 0x31; // version 3
    expect(await exchange(port, [broken, request()])).toBe('');
  });

  it('with no TRUSTED_PROXIES nothing is taken over', async () => {
    const port = await whoAmIServer([]);
    expect(server?.listeners('connection').length).toBe(1);
    expect(body(await exchange(port, [request('X-Forwarded-For: 203.0.113.8\r\n')]))).toBe('127.0.0.1');
  });

  it('a PROXY header ahead of the TLS handshake names the client of the HTTPS request', async () => {
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], {
      keyType: 'ec',
      curve: 'P-256',
    });
    server = createHttpsServer({ key: pems.private, cert: pems.cert }, (req, res) =>
      res.end(clientAddress(req.socket, req.headers)),
    );
    acceptProxyProtocol(server, new TrustedProxies(['127.0.0.1']));
    await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const raw = connect({ port, host: '127.0.0.1' });
    raw.write(proxyV2Header('203.0.113.7', port));
    const tls = tlsConnect({ socket: raw, rejectUnauthorized: false });
    tls.end(request());
    let out = '';
    tls.on('data', (d) => {
      out += d.toString('latin1');
    });
    await new Promise((r) => tls.on('close', r));
    expect(body(out)).toBe('203.0.113.7');
  });
});
