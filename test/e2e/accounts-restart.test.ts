/**
 * Start-up never depends on the length of the account log. A real `gateway http` process with an
 * account and a session is stopped; 1,000,000 `login_recorded` events (the shape ordinary logins
 * produce, written straight to `ACCOUNTS`) follow; the process restarts and answers `/healthz` and
 * a console request (the account, by the session made before) while its projection is still far
 * behind, its `/healthz` says how far, and a console change answers 503 `account_update_pending`
 * with `Retry-After` until its event is projected. The time to serve is printed
 * (`restart_serves_ms`); docs/limits.md gives it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type AccountEvent, accountSubject } from '../../contracts/accounts.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startHttpGatewayProcess, stopProcess } from '../support/process.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const EVENTS = 1_000_000;
const PASSWORD = 'Str0ng-Passw0rd!';
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

/** Publishes `count` logins of `accountId` as the console does, without waiting on each ack. */
async function publishLogins(accountId: string, count: number): Promise<void> {
  const subject = accountSubject(accountId, 'login_recorded');
  const target = (await lastSeq(nats, STREAMS.ACCOUNTS)) + count;
  for (let i = 0; i < count; i++) {
    const ev: AccountEvent = {
      type: 'login_recorded',
      account_id: accountId,
      session_hash: randomBytes(32).toString('hex'),
      expires_at: Date.now() + 3_600_000,
      attribution: { source: 'web' },
      at: Date.now(),
    };
    nats.nc.publish(subject, encode(ev));
    if (i % 20_000 === 19_999) await nats.nc.flush();
  }
  await nats.nc.flush();
  await eventually(async () => (await lastSeq(nats, STREAMS.ACCOUNTS)) >= target, 120_000, 'all stored');
}

it('restarts and serves the console at once over 1,000,000 account events, reporting its catch-up', {
  timeout: 300_000,
}, async () => {
  const env = { SELF_SERVICE_PLANS: 'true', ACCOUNT_PROJECTION_DEADLINE_MS: '1000' };
  let base = await startHttpGatewayProcess(server.url, config.API_KEY_SECRET, services, env);
  const call = (method: string, path: string, body?: unknown, session?: string) =>
    fetch(`${base}/api/v1/console${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const email = 'restart@example.com';
  const registered = await call('POST', '/register', {
    email,
    password: PASSWORD,
    plan: 'pro',
    jp_access: false,
  });
  expect(registered.status).toBe(201);
  const { account_id } = (await registered.json()) as { account_id: string };
  const login = await call('POST', '/login', { email, password: PASSWORD });
  const session = ((await login.json()) as { session_token: string }).session_token;
  const first = services[0] as ServiceProcess;
  await stopProcess(first, 'SIGTERM');

  await publishLogins(account_id, EVENTS);
  const end = await lastSeq(nats, STREAMS.ACCOUNTS);

  const startedAt = Date.now();
  base = await startHttpGatewayProcess(server.url, config.API_KEY_SECRET, services, env);
  const health = await eventually(async () => {
    const res = await fetch(`${base}/healthz`);
    return res.status === 200 ? ((await res.json()) as { accounts: Record<string, unknown> }) : null;
  });
  const account = await call('GET', '/account', undefined, session);
  const servedMs = Date.now() - startedAt;
  expect(account.status).toBe(200);
  expect(((await account.json()) as { account_id: string }).account_id).toBe(account_id);
  console.log(JSON.stringify({ restart_serves_ms: servedMs, account_events: EVENTS }));

  // Served while the projection was still far behind the log, which health reports.
  expect(health.accounts).toMatchObject({ target: end, caught_up: false });
  expect(health.accounts.applied as number).toBeLessThan(end);
  const change = await call('POST', '/keys', { name: 'during catch-up' }, session);
  expect(change.status).toBe(503);
  expect(change.headers.get('retry-after')).toBeTruthy();
  expect(((await change.json()) as { error: string }).error).toBe('account_update_pending');
});
