/**
 * Revocation reaches every gateway process at once: SSE streams open on two real gateway
 * processes all receive the terminal `auth_expired` within 1 s and new requests get 401. The
 * accounts path (register, a failed and a good login, key creation, use, revocation, logout) runs
 * over HTTP in a real `gateway http` process at debug level. Then, nothing in clear at rest or in
 * any output: the JSON logs and stderr of every process, the JetStream store and every KV bucket
 * hold neither the API key, nor its body, nor the password, nor the session token, nor the hex or
 * base64 form of any of them.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEY_PREFIX } from '../../contracts/api-key-format.ts';
import { openBucket } from '../../platform/kv.ts';
import type { Nats } from '../../platform/nats.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import {
  killAll,
  type ServiceProcess,
  startHttpGatewayProcess,
  startUnifiedGateways,
} from '../support/process.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

const PASSWORD = 'Sup3r-Secret-Passw0rd!';
const EMAIL = 'rev@example.com';
const config = testConfig();
let server: TestNats;
let nats: Nats;
const services: ServiceProcess[] = [];

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
});

afterAll(async () => {
  await killAll(services);
  await nats?.nc.close();
  await server?.cleanup();
});

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** A secret as written, and its hex and base64 (padded or not, standard or URL) encodings. */
function forms(label: string, secret: string): [string, string][] {
  const b = Buffer.from(secret);
  return [
    [label, secret],
    [`${label} (hex)`, b.toString('hex')],
    [`${label} (HEX)`, b.toString('hex').toUpperCase()],
    [`${label} (base64)`, b.toString('base64').replace(/=+$/, '')],
    [`${label} (base64url)`, b.toString('base64url')],
  ];
}

it('revokes on every gateway process within 1 s and leaves no secret at rest or in any output', {
  timeout: 180_000,
}, async () => {
  const base = await startHttpGatewayProcess(server.url, config.API_KEY_SECRET, services, {
    LOG_LEVEL: 'debug',
    SELF_SERVICE_PLANS: 'true',
  });
  const http = services[0] as ServiceProcess;
  const consoleCall = (method: string, path: string, body?: unknown, session?: string) =>
    fetch(`${base}/api/v1/console${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const registered = await consoleCall('POST', '/register', {
    email: EMAIL,
    password: PASSWORD,
    plan: 'pro',
    jp_access: false,
  });
  expect(registered.status).toBe(201);
  expect((await consoleCall('POST', '/login', { email: EMAIL, password: `${PASSWORD}x` })).status).toBe(401);
  const login = await consoleCall('POST', '/login', { email: EMAIL, password: PASSWORD });
  expect(login.status).toBe(200);
  const session = (await login.json()).session_token as string;
  const created = await consoleCall('POST', '/keys', { name: 'rotating' }, session);
  expect(created.status).toBe(201);
  const { key, key_id } = (await created.json()) as { key: string; key_id: string };
  expect((await fetch(`${base}/mcp/presets`, { headers: { 'x-api-key': key } })).status).toBe(200);

  const urls = await startUnifiedGateways(2, server.url, config.API_KEY_SECRET, services, {
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
  expect((await consoleCall('DELETE', `/keys/${key_id}`, undefined, session)).status).toBeLessThan(300);
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

  expect((await consoleCall('POST', '/logout', undefined, session)).status).toBe(204);

  await killAll(services, 'SIGTERM');
  const secrets = [
    ...forms('the key', key),
    ...forms("the key's body", key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 32)),
    ...forms('the password', PASSWORD),
    ...forms('the session token', session),
  ];
  for (const g of services) {
    const output = g.output();
    // Every process logged the requests it served (at debug level: nothing filtered out).
    expect(g.logs.some((l) => l.msg === 'request')).toBe(true);
    for (const [label, s] of secrets)
      expect(output.includes(s), `${label} in ${g.child.spawnargs.join(' ')}`).toBe(false);
  }
  for (const path of ['register', 'login', 'keys', 'logout'])
    expect(
      http.logs.some((l) => l.msg === 'request' && l.url === `/api/v1/console/${path}`),
      path,
    ).toBe(true);

  for (const file of filesUnder(server.storeDir)) {
    const bytes = readFileSync(file);
    for (const [label, s] of secrets)
      expect(bytes.includes(Buffer.from(s)), `${label} in ${file}`).toBe(false);
  }
  for (const name of ['keys', 'accounts', 'sessions', 'key_usage', 'leases']) {
    const kv = (await openBucket(nats, name)).raw;
    let entries = 0;
    for await (const k of await kv.keys()) {
      const raw = Buffer.concat([Buffer.from(k), Buffer.from((await kv.get(k))?.value ?? new Uint8Array())]);
      for (const [label, s] of secrets)
        expect(raw.includes(Buffer.from(s)), `${label} in ${name}/${k}`).toBe(false);
      entries++;
    }
    if (name !== 'key_usage') expect(entries, name).toBeGreaterThan(0);
  }
});
