/**
 * Revocation reaches every gateway process at once: SSE streams open on two real gateway
 * processes all receive the terminal `auth_expired` within 1 s and new requests get 401. Then,
 * nothing in clear at rest: the JetStream store, every KV bucket and every log line hold neither
 * the API key nor the password.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openBucket } from '../../platform/kv.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { type ServiceProcess, startUnifiedGateways } from '../support/process.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

const PASSWORD = 'Sup3r-Secret-Passw0rd!';
const config = testConfig();
let server: TestNats;
let nats: Nats;
let accounts: TestAccounts;
const gateways: ServiceProcess[] = [];

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  accounts = await startTestAccounts(nats, config);
});

afterAll(async () => {
  for (const g of gateways) g.child.kill('SIGKILL');
  accounts?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

it('revokes on every gateway process within 1 s and leaves no secret at rest', async () => {
  const { account_id } = await accounts.service.register({
    email: 'rev@example.com',
    password: PASSWORD,
    plan: 'pro',
    jp_access: false,
  });
  const { key, key_id } = await accounts.service.createKey(account_id, { name: 'rotating', scopes: [] });
  await accounts.service.login({ email: 'rev@example.com', password: PASSWORD, source: 'web' });

  const urls = await startUnifiedGateways(2, server.url, config.API_KEY_SECRET, gateways, {
    LOG_LEVEL: 'debug',
  });

  const received: { at: number; msg: SseMessage }[][] = [];
  const streams = [];
  for (const url of [...urls, ...urls]) {
    const got: { at: number; msg: SseMessage }[] = [];
    received.push(got);
    const s = await openSse(url, (msg) => got.push({ at: Date.now(), msg }), { 'x-api-key': key });
    expect(s.status).toBe(200);
    streams.push(s);
  }

  const revokedAt = Date.now();
  await accounts.service.revokeKey(account_id, key_id);
  await Promise.all(streams.map((s) => s.done));

  for (const got of received) {
    const last = got.at(-1);
    expect(last?.msg.event).toBe('error');
    expect(JSON.parse(last?.msg.data ?? '{}')).toMatchObject({ code: 'auth_expired', terminal: true });
    expect((last?.at ?? Infinity) - revokedAt).toBeLessThan(1_000);
  }
  for (const url of urls) {
    const res = await fetch(url, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe('key_revoked');
  }

  for (const g of gateways) g.child.kill('SIGTERM');
  await Promise.all(gateways.map((g) => g.exited));
  const secrets = [key, PASSWORD];
  const logs = gateways.flatMap((g) => g.logs.map((l) => JSON.stringify(l))).join('\n');
  expect(logs.length).toBeGreaterThan(0);
  for (const s of secrets) expect(logs.includes(s)).toBe(false);

  for (const file of filesUnder(server.storeDir)) {
    const bytes = readFileSync(file);
    for (const s of secrets)
      expect(bytes.includes(Buffer.from(s)), `${s.slice(0, 6)}… in ${file}`).toBe(false);
  }
  for (const name of ['keys', 'accounts', 'sessions', 'key_usage', 'leases']) {
    const kv = (await openBucket(nats, name)).raw;
    let entries = 0;
    for await (const k of await kv.keys()) {
      const raw = Buffer.concat([Buffer.from(k), Buffer.from((await kv.get(k))?.value ?? new Uint8Array())]);
      for (const s of secrets) expect(raw.includes(Buffer.from(s)), `${name}/${k}`).toBe(false);
      entries++;
    }
    if (name !== 'key_usage') expect(entries, name).toBeGreaterThan(0);
  }
});
