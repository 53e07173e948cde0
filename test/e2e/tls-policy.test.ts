/**
 * The TLS policy on every edge listener of the real service (console, unified and JSON-RPC, US and JP), with an EC (self-signed) and with an
 * RSA certificate (files): TLS 1.0/1.1 refused with the `protocol version` alert; RSA key exchange,
 * DHE and ECDHE-CBC refused with `handshake failure` (no shared cipher); ECDHE AES-GCM / ChaCha20
 * on TLS 1.2 and TLS 1.3 accepted — checked with `openssl s_client`, as a client outside Node
 * would connect. A positive control proves each refusal is the server's: the same openssl
 * invocations complete a handshake with a permissive local server (so a missing binary, a wrong
 * port or an unsupported flag cannot pass as a refusal).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import {
  ACCEPTED,
  handshake,
  makeRsaCertificate,
  REFUSED,
  startPermissiveServer,
} from '../support/tls-handshake.ts';

let nats: TestNats;
const services: ServiceProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mdp-tls-'));
const listeners: Record<string, string> = {};
let permissive: Server;

async function startEdge(name: string, env: Record<string, string>): Promise<void> {
  const svc = startService([], {
    NATS_URL: nats.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: testConfig().API_KEY_SECRET,
    DATA_DIR: join(dir, name),
    HTTP_PORT: '0',
    UNIFIED_PORT_US: '0',
    UNIFIED_PORT_JP: '0',
    JSONRPC_PORT_US: '0',
    JSONRPC_PORT_JP: '0',
    // Every edge of `all` on a free port: two services, or another test's, may run at once.
    GRPC_PORT_US: '0',
    GRPC_PORT_JP: '0',
    DISKSYNC_PORT_US: '0',
    DISKSYNC_PORT_JP: '0',
    ...env,
  });
  services.push(svc);
  listeners[`${name}/http`] = (await svc.waitForLog((l) => l.msg === 'http (console) listening'))
    .url as string;
  for (const region of ['us', 'jp']) {
    listeners[`${name}/${region}`] = (
      await svc.waitForLog((l) => l.msg === 'unified stream listening' && l.region === region)
    ).url as string;
    listeners[`${name}/jsonrpc-${region}`] = (
      await svc.waitForLog((l) => l.msg === 'json-rpc listening' && l.region === region)
    ).url as string;
  }
}

beforeAll(async () => {
  nats = await startTestNats();
  const { key, cert } = makeRsaCertificate(dir);
  const control = await startPermissiveServer({ key, cert });
  permissive = control.server;
  listeners.control = control.url;
  await Promise.all([
    startEdge('ec', { TLS_SELF_SIGNED: 'true' }),
    startEdge('rsa', { TLS_CERT_FILE: cert, TLS_KEY_FILE: key }),
  ]);
});

afterAll(async () => {
  permissive?.close();
  await killAll(services, 'SIGTERM');
  await nats?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('positive control: a permissive server completes every handshake the policy refuses', () => {
  it.each(REFUSED.rsa)('%s', async (_label, args) => {
    expect(await handshake(listeners.control as string, args)).toMatchObject({ ok: true });
  });
});

for (const kind of ['ec', 'rsa'] as const)
  describe.each(['http', 'us', 'jp', 'jsonrpc-us', 'jsonrpc-jp'])(
    `${kind} certificate, listener %s`,
    (name) => {
      const url = () => listeners[`${kind}/${name}`] as string;

      it('is HTTPS', () => {
        expect(url()).toMatch(/^https:\/\//);
      });

      it.each(REFUSED[kind])('refuses %s', async (_label, args, alert) => {
        const h = await handshake(url(), args);
        expect(h.ok).toBe(false);
        expect(h.alert).toBe(alert);
      });

      it.each(ACCEPTED[kind])('accepts %s', async (_label, args) => {
        expect((await handshake(url(), args)).ok).toBe(true);
      });
    },
  );

it.each(['us', 'jsonrpc-us'])('serves the %s health check over HTTPS', async (name) => {
  const status = await new Promise<number>((resolve, reject) => {
    get(
      `${new URL(listeners[`ec/${name}`] as string).origin}/healthz`,
      { rejectUnauthorized: false },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    ).on('error', reject);
  });
  expect(status).toBe(200);
});
