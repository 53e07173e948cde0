/**
 * The TLS policy on every edge listener of the real service (self-signed certificate): TLS 1.0/1.1
 * refused, non-ECDHE and CBC suites refused, ECDHE AES-GCM / ChaCha20 on TLS 1.2 and TLS 1.3
 * accepted — checked with `openssl s_client`, as a client outside Node would connect.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService } from '../support/process.ts';

let nats: TestNats;
let svc: ServiceProcess;
const dataDir = mkdtempSync(join(tmpdir(), 'mdp-tls-'));
const listeners: Record<string, string> = {};

beforeAll(async () => {
  nats = await startTestNats();
  svc = startService([], {
    NATS_URL: nats.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: testConfig().API_KEY_SECRET,
    DATA_DIR: dataDir,
    TLS_SELF_SIGNED: 'true',
    HTTP_PORT: '0',
    UNIFIED_PORT_US: '0',
    UNIFIED_PORT_JP: '0',
  });
  listeners.http = (await svc.waitForLog((l) => l.msg === 'http (console) listening')).url as string;
  listeners.us = (await svc.waitForLog((l) => l.msg === 'unified stream listening' && l.region === 'us'))
    .url as string;
  listeners.jp = (await svc.waitForLog((l) => l.msg === 'unified stream listening' && l.region === 'jp'))
    .url as string;
});

afterAll(async () => {
  svc?.child.kill('SIGTERM');
  await svc?.exited;
  await nats?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

function handshake(url: string, args: string[]): boolean {
  const { port } = new URL(url);
  const r = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, ...args], {
    input: '',
    timeout: 10_000,
    encoding: 'utf8',
  });
  return r.status === 0 && /Cipher is (?!\(NONE\))/.test(r.stdout);
}

describe.each(['http', 'us', 'jp'])('listener %s', (name) => {
  it('is HTTPS', () => {
    expect(listeners[name]).toMatch(/^https:\/\//);
  });

  it.each([
    ['TLS 1.0', ['-tls1', '-cipher', 'DEFAULT:@SECLEVEL=0']],
    ['TLS 1.1', ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0']],
    ['TLS 1.2 RSA key exchange, CBC', ['-tls1_2', '-cipher', 'AES128-SHA:@SECLEVEL=0']],
    [
      'TLS 1.2 ECDHE with CBC',
      ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384:ECDHE-ECDSA-AES128-SHA'],
    ],
    ['TLS 1.2 DHE', ['-tls1_2', '-cipher', 'DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384']],
  ])('refuses %s', (_label, args) => {
    expect(handshake(listeners[name] as string, args)).toBe(false);
  });

  it.each([
    ['TLS 1.2 ECDHE AES-128-GCM', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-GCM-SHA256']],
    ['TLS 1.2 ECDHE AES-256-GCM', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES256-GCM-SHA384']],
    ['TLS 1.2 ECDHE ChaCha20-Poly1305', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-CHACHA20-POLY1305']],
    ['TLS 1.3', ['-tls1_3']],
  ])('accepts %s', (_label, args) => {
    expect(handshake(listeners[name] as string, args)).toBe(true);
  });
});

it('serves the unified health check over HTTPS', async () => {
  const status = await new Promise<number>((resolve, reject) => {
    get(`${new URL(listeners.us as string).origin}/healthz`, { rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
  expect(status).toBe(200);
});
