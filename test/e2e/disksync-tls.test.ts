/**
 * The TLS matrix of the disk-sync edge on both ports (`gateway disksync --region us|jp`), with a
 * self-signed EC certificate and with an RSA certificate from files, checked with `openssl
 * s_client` as a client outside Node connects: TLS 1.0/1.1 refused (`protocol version`); RSA key
 * exchange, DHE and ECDHE-CBC refused (`handshake failure`); ECDHE AES-GCM / ChaCha20 on TLS 1.2
 * and TLS 1.3 accepted; a real `ws` client completes the WebSocket upgrade over `wss://` and is
 * served. Positive control: the same openssl invocations complete against a permissive server of
 * each certificate kind (test/support/tls-handshake.ts), so a refusal is the edge's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccounts } from '../support/accounts.ts';
import { connectSync, type SyncClient, startDisksyncEdge, stopAll } from '../support/disksync.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import type { ServiceProcess } from '../support/process.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import {
  ACCEPTED,
  handshake,
  makeRsaCertificate,
  REFUSED,
  startPermissiveServer,
} from '../support/tls-handshake.ts';

const config = testConfig();
let server: TestNats;
let base: BaseStack;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const clients: SyncClient[] = [];
const dir = mkdtempSync(join(tmpdir(), 'mdp-disksync-tls-'));
const urls: Record<string, string> = {};
const permissive: Server[] = [];
const KINDS = ['ec', 'rsa'] as const;
const REGIONS = ['us', 'jp'] as const;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, accounts } = base);
  const rsa = makeRsaCertificate(dir, 'rsa');
  const env = { ec: { TLS_SELF_SIGNED: 'true' }, rsa: { TLS_CERT_FILE: rsa.cert, TLS_KEY_FILE: rsa.key } };
  for (const [kind, files] of [
    ['ec', makeRsaCertificate(dir, 'ec')],
    ['rsa', rsa],
  ] as const) {
    const control = await startPermissiveServer(files);
    permissive.push(control.server);
    urls[`control-${kind}`] = control.url;
  }
  await Promise.all(
    KINDS.flatMap((kind) =>
      REGIONS.map(async (region) => {
        urls[`${kind}-${region}`] = await startDisksyncEdge(
          server.url,
          config.API_KEY_SECRET,
          region,
          env[kind],
          processes,
        ).url;
      }),
    ),
  );
}, 180_000);

afterAll(async () => {
  for (const p of permissive) p.close();
  await stopAll(clients, processes, 'SIGTERM');
  await base?.close();
  rmSync(dir, { recursive: true, force: true });
});

for (const kind of KINDS) {
  describe(`positive control (${kind}): a permissive server completes every handshake the policy refuses`, () => {
    it.each(REFUSED[kind])('%s', async (_label, args) => {
      expect(await handshake(urls[`control-${kind}`] as string, args)).toMatchObject({ ok: true });
    });
  });

  describe.each(REGIONS)(`disk-sync %s port, ${kind} certificate`, (region) => {
    const url = () => urls[`${kind}-${region}`] as string;

    it('listens on wss:// and serves a WebSocket client over TLS', async () => {
      expect(url()).toMatch(/^wss:/);
      const { key } = await accounts.key('quant', { jp: true });
      const c = connectSync(url(), { key });
      clients.push(c);
      c.send({ op: 'subscribe', id: 't' });
      await c.control('caught_up');
      await c.close();
    });

    it.each(REFUSED[kind])('refuses %s', async (_label, args, alert) => {
      const h = await handshake(url(), args);
      expect(h.ok).toBe(false);
      expect(h.alert).toBe(alert);
    });

    it.each(ACCEPTED[kind])('accepts %s', async (_label, args) => {
      expect(await handshake(url(), args)).toMatchObject({ ok: true });
    });
  });
}
