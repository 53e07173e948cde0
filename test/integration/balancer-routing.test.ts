/**
 * compose/haproxy.cfg itself, run by a real HAProxy (skipped where no `haproxy` binary is
 * installed; `.ci/run` installs Debian's): every public address on one TLS port, routed by host
 * name: the HTTP `Host` for the console, SSE and JSON-RPC (over HTTP/1.1 and HTTP/2), the TLS SNI
 * for gRPC and the disk-sync WebSocket, US and JP apart; an unknown name is 503 `unknown_host`.
 * The file is used as written except for what a test machine must change: the certificate's
 * path, the bind address and port, and each backend server's address (one local server per
 * backend, which answers with its backend's name and reads the balancer's PROXY v2 header with the
 * gateways' own code, so the client's address it reports proves `send-proxy-v2` on every route).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createH2cServer, type Http2Server, connect as http2Connect } from 'node:http2';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acceptProxyProtocol, clientAddress, TrustedProxies } from '../../gateways/core/client-address.ts';
import { freePort } from '../../platform/free-port.ts';
import { eventually } from '../support/eventually.ts';
import { makeRsaCertificate } from '../support/tls-handshake.ts';

const haproxy = spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
const root = join(import.meta.dirname, '..', '..');

/** The host names as compose gives them to the balancer (docker-compose.yml's defaults). */
function composeHosts(): Record<string, string> {
  const compose = readFileSync(join(root, 'compose', 'docker-compose.yml'), 'utf8');
  return Object.fromEntries(
    [...compose.matchAll(/(MDP_[A-Z_]+_HOST): \$\{MDP_[A-Z_]+_HOST:-([^}]+)\}/g)].map((m) => [m[1], m[2]]),
  );
}

const hosts = composeHosts();
let dir = '';
let port = 0;
let balancer: ChildProcess | null = null;
const servers: (Server | Http2Server)[] = [];

/** A backend's stand-in: answers `<backend> <client address>` (200 on /healthz for the checks). */
async function backendServer(name: string, h2: boolean): Promise<number> {
  const answer = (req: { socket: object; headers: Record<string, string | string[] | undefined> }) =>
    `${name} ${clientAddress(req.socket, req.headers)}`;
  const server = h2
    ? createH2cServer((req, res) => res.end(answer(req)))
    : createServer((req, res) => res.end(answer(req)));
  acceptProxyProtocol(server, new TrustedProxies(['127.0.0.1']));
  const p = await freePort();
  await new Promise<void>((resolve) => server.listen(p, '127.0.0.1', resolve));
  servers.push(server);
  return p;
}

beforeAll(async () => {
  if (!haproxy) return;
  expect(Object.keys(hosts).length).toBe(9);
  dir = mkdtempSync(join(tmpdir(), 'mdp-balancer-'));
  const names = Object.values(hosts);
  const { key, cert } = makeRsaCertificate(
    dir,
    'rsa',
    names.map((n) => `DNS:${n}`),
  );
  writeFileSync(join(dir, 'edge.pem'), readFileSync(cert) + readFileSync(key).toString());
  port = await freePort();
  let cfg = readFileSync(join(root, 'compose', 'haproxy.cfg'), 'utf8')
    .replaceAll('/certs/edge.pem', join(dir, 'edge.pem'))
    .replace('bind :443 ', `bind 127.0.0.1:${port} `);
  let backend = '';
  const lines: string[] = [];
  for (const line of cfg.split('\n')) {
    const section = /^backend (\S+)/.exec(line);
    if (section) backend = section[1] as string;
    const server = /^(\s+server \S+ )\S+(.*)$/.exec(line);
    if (server) {
      const p = await backendServer(backend, line.includes('proto h2'));
      lines.push(`${server[1]}127.0.0.1:${p}${server[2]} inter 200`);
    } else lines.push(line);
  }
  cfg = lines.join('\n');
  writeFileSync(join(dir, 'haproxy.cfg'), cfg);
  balancer = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], {
    stdio: 'ignore',
    env: { ...process.env, ...hosts },
  });
  await eventually(
    () =>
      get(hosts.MDP_BASE_HOST as string).then(
        (r) => r.body.startsWith('http '),
        () => false,
      ),
    20_000,
    'HAProxy routing to its backends (health checks passed)',
  );
}, 60_000);

afterAll(async () => {
  balancer?.kill();
  for (const s of servers) s.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** GET / over HTTPS/1.1 with `sni` as the TLS server name and `host` as the Host header. */
function get(sni: string, host = sni): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        servername: sni,
        path: '/',
        headers: { host },
        rejectUnauthorized: false,
        agent: false,
      },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A request over HTTP/2 (ALPN h2, as gRPC and browsers speak) to `sni` with `:authority` `host`. */
function getH2(sni: string, host = sni): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2Connect(`https://${host}:${port}`, {
      host: '127.0.0.1',
      servername: sni,
      rejectUnauthorized: false,
    });
    session.on('error', reject);
    const stream = session.request({ ':path': '/', ':method': 'POST', 'content-type': 'application/grpc' });
    let status = 0;
    let body = '';
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.on('data', (c) => (body += c));
    stream.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    stream.on('error', reject);
    stream.end();
  });
}

it.skipIf(!haproxy)(
  'routes HTTP by Host, over HTTP/1.1 and HTTP/2, each with the client address',
  async () => {
    for (const [name, backend] of [
      ['MDP_BASE_HOST', 'http'],
      ['MDP_UNIFIED_US_HOST', 'unified_us'],
      ['MDP_UNIFIED_JP_HOST', 'unified_jp'],
      ['MDP_JSONRPC_US_HOST', 'jsonrpc_us'],
      ['MDP_JSONRPC_JP_HOST', 'jsonrpc_jp'],
    ] as const) {
      const host = hosts[name] as string;
      expect(await get(host), name).toEqual({ status: 200, body: `${backend} 127.0.0.1` });
      // The Host decides, whatever name the TLS handshake carried.
      expect((await get(hosts.MDP_BASE_HOST as string, host)).body, name).toBe(`${backend} 127.0.0.1`);
      expect((await getH2(host)).body, `${name} over HTTP/2`).toBe(`${backend} 127.0.0.1`);
    }
  },
);

it.skipIf(!haproxy)('routes gRPC and the disk-sync WebSocket by SNI, US and JP apart', async () => {
  expect((await getH2(hosts.MDP_GRPC_US_HOST as string)).body).toBe('grpc_us 127.0.0.1');
  expect((await getH2(hosts.MDP_GRPC_JP_HOST as string)).body).toBe('grpc_jp 127.0.0.1');
  // The SNI decides, whatever Host the request then names.
  const base = hosts.MDP_BASE_HOST as string;
  expect((await get(hosts.MDP_DISKSYNC_US_HOST as string, base)).body).toBe('disksync_us 127.0.0.1');
  expect((await get(hosts.MDP_DISKSYNC_JP_HOST as string, base)).body).toBe('disksync_jp 127.0.0.1');
});

it.skipIf(!haproxy)('answers a host name no service answers to with 503 unknown_host', async () => {
  const res = await get('elsewhere.example');
  expect(res.status).toBe(503);
  expect(JSON.parse(res.body)).toMatchObject({ error: 'unknown_host' });
});
