/**
 * The TLS matrix of the gRPC edge on both ports (`gateway grpc --region us|jp`, self-signed EC
 * certificate), with `openssl s_client -alpn h2` as a client outside Node connects: ALPN `h2`
 * negotiated; TLS 1.0/1.1 refused (`protocol version`), ECDHE-CBC refused (`handshake failure`);
 * ECDHE AES-GCM / ChaCha20 on TLS 1.2 and TLS 1.3 accepted. Positive control: the same
 * invocations complete against a permissive server (test/support/tls-handshake.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
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

const H2 = ['-alpn', 'h2'];
let nats: TestNats;
const services: ServiceProcess[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mdp-grpc-tls-'));
const ports: Record<string, string> = {};
let permissive: Server;

async function startEdge(region: 'us' | 'jp'): Promise<void> {
  const svc = startService(['gateway', 'grpc', '--region', region], {
    NATS_URL: nats.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: testConfig().API_KEY_SECRET,
    TLS_SELF_SIGNED: 'true',
    GRPC_PORT_US: '0',
    GRPC_PORT_JP: '0',
  });
  services.push(svc);
  const line = await svc.waitForLog((l) => l.msg === 'grpc listening', 60_000);
  expect(line.url).toMatch(/^grpcs:/);
  ports[region] = `https://127.0.0.1:${line.port}`;
}

beforeAll(async () => {
  nats = await startTestNats();
  const control = await startPermissiveServer(makeRsaCertificate(dir, 'ec'));
  permissive = control.server;
  ports.control = control.url;
  await Promise.all([startEdge('us'), startEdge('jp')]);
}, 120_000);

afterAll(async () => {
  permissive?.close();
  await killAll(services, 'SIGTERM');
  await nats?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('positive control: a permissive server completes every handshake the policy refuses', () => {
  it.each(REFUSED.ec)('%s', async (_label, args) => {
    expect(await handshake(ports.control as string, [...args, ...H2])).toMatchObject({ ok: true });
  });
});

describe.each(['us', 'jp'])('gRPC %s port', (region) => {
  const url = () => ports[region] as string;

  it('negotiates ALPN h2', async () => {
    expect(await handshake(url(), ['-tls1_2', ...H2])).toMatchObject({ ok: true, alpn: 'h2' });
  });

  it.each(REFUSED.ec)('refuses %s', async (_label, args, alert) => {
    const h = await handshake(url(), [...args, ...H2]);
    expect(h.ok).toBe(false);
    expect(h.alert).toBe(alert);
  });

  it.each(ACCEPTED.ec)('accepts %s', async (_label, args) => {
    expect(await handshake(url(), [...args, ...H2])).toMatchObject({ ok: true, alpn: 'h2' });
  });
});
