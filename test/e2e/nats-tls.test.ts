/**
 * NATS over TLS from configuration: a nats-server that accepts only TLS clients presenting a
 * certificate signed by its CA. A process configured with `NATS_TLS_CA_FILE`, `NATS_TLS_CERT_FILE`
 * and `NATS_TLS_KEY_FILE` connects and serves; one that trusts the CA but has no client
 * certificate, or has no TLS configuration at all, stops at start with exit code 1 (never hangs).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../platform/free-port.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { natsAuthOptions } from '../../platform/nats-auth.ts';
import { eventually } from '../support/eventually.ts';
import { readHistory } from '../support/history-read.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-nats-tls-'));
const file = (name: string) => join(dir, name);
let server: ChildProcess;
let url = '';
const services: ServiceProcess[] = [];

const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });

/** A CA, a server certificate for 127.0.0.1 and a client certificate, both signed by the CA. */
function makeCertificates(): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=mdp test CA',
  );
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  writeFileSync(file('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      file(`${who}.key`),
      '-out',
      file(`${who}.csr`),
      '-subj',
      `/CN=${who}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${who}.csr`),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-out',
      file(`${who}.crt`),
      '-days',
      '2',
      '-extfile',
      file(`${who}.ext`),
    );
  }
}

beforeAll(async () => {
  makeCertificates();
  const port = await freePort();
  writeFileSync(
    file('nats.conf'),
    [
      `listen: 127.0.0.1:${port}`,
      `jetstream { store_dir: "${file('store')}" }`,
      `tls { cert_file: "${file('server.crt')}", key_file: "${file('server.key')}", ca_file: "${file('ca.crt')}", verify: true, timeout: 2 }`,
    ].join('\n'),
  );
  server = spawn('nats-server', ['-c', file('nats.conf')], { stdio: 'ignore' });
  url = `tls://127.0.0.1:${port}`;
  const tls = { caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') };
  await eventually(async () => {
    const nc = await connect({ servers: url, tls, reconnect: false }).catch(() => null);
    await nc?.close();
    return nc !== null;
  }, 10_000);
}, 30_000);

afterAll(async () => {
  await killAll(services);
  server?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function start(tlsEnv: Record<string, string>): ServiceProcess {
  const svc = startService(['gateway', 'http'], {
    NATS_URL: url,
    NODE_ENV: 'test',
    API_KEY_SECRET: 'nats-tls-test-secret-0123',
    DATA_DIR: join(dir, `data-${services.length}`),
    HTTP_PORT: '0',
    ...tlsEnv,
  });
  services.push(svc);
  return svc;
}

describe('NATS over TLS', () => {
  it('connects with the CA and a client certificate from configuration, and serves', async () => {
    const svc = start({
      NATS_TLS_CA_FILE: file('ca.crt'),
      NATS_TLS_CERT_FILE: file('client.crt'),
      NATS_TLS_KEY_FILE: file('client.key'),
    });
    const base = (await svc.waitForLog((l) => l.msg === 'http (console) listening')).url as string;
    await svc.waitForLog((l) => l.msg === 'running');
    // Registration is an event on the ACCOUNTS stream, projected back through KV: NATS round trips.
    const res = await fetch(new URL('/api/v1/console/register', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: 'tls@example.com',
        password: 'C0rrect-Horse-Battery',
        plan: 'basic',
        jp_access: false,
      }),
    });
    expect(res.status).toBe(201);
    expect(svc.logs.some((l) => l.tls === true)).toBe(true);
  }, 60_000);

  it('reads history over its own TLS connection with the configured certificate', async () => {
    const auth = natsAuthOptions({
      NATS_TLS_CA_FILE: file('ca.crt'),
      NATS_TLS_CERT_FILE: file('client.crt'),
      NATS_TLS_KEY_FILE: file('client.key'),
    });
    const nats = await connectNats(url, 'tls-history', createLogger('error'), auth);
    try {
      await nats.jsm.streams.add({ name: 'TLS_HISTORY', subjects: ['tlshistory.>'] });
      for (let i = 0; i < 500; i++) nats.nc.publish('tlshistory.a', JSON.stringify({ i }));
      await nats.nc.flush();
      await eventually(async () => (await nats.jsm.streams.info('TLS_HISTORY')).state.messages === 500);
      const { seqs, over, subscriptions } = await readHistory(nats, 'TLS_HISTORY', 'tlshistory.>', 500);
      expect(over).not.toBeNull();
      expect(subscriptions).toBe(1);
      expect(seqs).toEqual(Array.from({ length: 500 }, (_, k) => k + 1));
    } finally {
      await nats.nc.close();
    }
  }, 60_000);

  it('stops with exit code 1 when the server wants a client certificate and none is configured', async () => {
    const svc = start({ NATS_TLS_CA_FILE: file('ca.crt') });
    expect(await svc.exited).toBe(1);
    expect(svc.logs.some((l) => l.msg === 'running')).toBe(false);
  }, 60_000);

  it('stops with exit code 1 without any TLS configuration', async () => {
    const svc = start({});
    expect(await svc.exited).toBe(1);
  }, 60_000);
});
