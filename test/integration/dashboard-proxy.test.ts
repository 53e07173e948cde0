/**
 * Dashboard proxy `{base_url}/api/v1/unified/*`: a console session (not an API key) gets the unified
 * stream through the proxy, which presents the process's service key upstream; the unified host
 * itself still refuses the session token; plans without the unified stream get 403. A session is
 * held to a key's standard for the whole stream: a logout or a downgrade to Basic ends an open
 * stream with a terminal error, and the next attempt gets 401 / 403.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServiceKey, type ServiceKey } from '../../app/service-key.ts';
import { accountSubject } from '../../contracts/accounts.ts';
import { encode } from '../../platform/msgpack.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

let base: BaseStack;
let unified: TestGateway;
let accounts: TestAccounts;
let http: TestHttp;
let service: ServiceKey;

beforeAll(async () => {
  base = await startBase();
  accounts = base.accounts;
  unified = await startTestGateway(base.server.url, {}, { guard: 'keys' });
  service = await createServiceKey(accounts.service);
  http = await startTestHttp(unified.nats, unified.config, accounts, {
    upstream: () => unified.url,
    serviceKey: () => service.key,
  });
});

afterAll(async () => {
  await http?.close();
  await service?.revoke();
  await unified?.close();
  await base?.close();
});

async function session(plan: 'basic' | 'pro'): Promise<string> {
  const email = `${plan}-${Date.now()}@example.com`;
  await accounts.service.register({ email, password: 'C0rrect-Horse-Battery', plan, jp_access: false });
  return (await accounts.service.login({ email, password: 'C0rrect-Horse-Battery' })).session_token;
}

it('streams the unified feed to a session through the proxy, and only there', async () => {
  const token = await session('pro');
  const got: SseMessage[] = [];
  let enough: () => void = () => {};
  const five = new Promise<void>((r) => (enough = r));
  const s = await openSse(
    `${http.url}/api/v1/unified/stream?coin=BTC`,
    (m) => m.event === 'message' && got.push(m) >= 5 && enough(),
    {
      authorization: `Bearer ${token}`,
    },
  );
  expect(s.status).toBe(200);
  expect(s.headers.get('content-type')).toMatch(/text\/event-stream/);
  const publisher = publishAtRate(unified.nats.js, ['BTC'], 200);
  await five;
  await publisher.stop();
  s.abort();
  expect(got.every((m) => JSON.parse(m.data).symbol === 'BTC')).toBe(true);
  // The unified host itself does not take session tokens.
  await expectError(
    await fetch(`${unified.url}/api/v1/unified/stream`, { headers: { authorization: `Bearer ${token}` } }),
    401,
    'invalid_key',
  );
});

it('refuses a missing or bad session with 401 and a Basic plan with 403', async () => {
  await expectError(await fetch(`${http.url}/api/v1/unified/stream`), 401, 'session_invalid');
  await expectError(
    await fetch(`${http.url}/api/v1/unified/stream`, { headers: { authorization: 'Bearer mds_nope' } }),
    401,
    'session_invalid',
  );
  const basic = await session('basic');
  await expectError(
    await fetch(`${http.url}/api/v1/unified/stream`, { headers: { authorization: `Bearer ${basic}` } }),
    403,
    'tier_restricted',
  );
});

/** A Pro session's proxied stream, open and delivering; `ended` resolves with the last message. */
async function openProxied(token: string) {
  const got: SseMessage[] = [];
  let first: () => void = () => {};
  const flowing = new Promise<void>((r) => (first = r));
  const s = await openSse(
    `${http.url}/api/v1/unified/stream?coin=BTC`,
    (m) => {
      got.push(m);
      if (m.event === 'message') first();
    },
    { authorization: `Bearer ${token}` },
  );
  expect(s.status).toBe(200);
  const publisher = publishAtRate(unified.nats.js, ['BTC'], 100);
  await flowing;
  return {
    async ended(): Promise<SseMessage | undefined> {
      await s.done;
      await publisher.stop();
      return got.at(-1);
    },
  };
}

async function accountOf(token: string): Promise<string> {
  return accounts.service.sessionAccount(token);
}

it('ends an open proxied stream when its session logs out; the session then gets 401', async () => {
  const token = await session('pro');
  const stream = await openProxied(token);
  await accounts.service.logout(token);
  const last = await stream.ended();
  expect(last?.event).toBe('error');
  const data = JSON.parse(last?.data ?? '{}');
  expect(data.terminal).toBe(true);
  expect(['auth_expired', 'reconnect']).toContain(data.code);
  expect(data.request_id).toMatch(/^req_/);
  await expectError(
    await fetch(`${http.url}/api/v1/unified/stream`, { headers: { authorization: `Bearer ${token}` } }),
    401,
    'session_invalid',
  );
}, 30_000);

it('ends an open proxied stream when the plan drops to Basic (tier_restricted); the session then gets 403', async () => {
  const token = await session('pro');
  const accountId = await accountOf(token);
  const stream = await openProxied(token);
  const ack = await unified.nats.js.publish(
    accountSubject(accountId, 'plan_changed'),
    encode({ type: 'plan_changed', account_id: accountId, plan: 'basic', jp_access: false, at: Date.now() }),
  );
  const last = await stream.ended();
  expect(last?.event).toBe('error');
  expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ code: 'tier_restricted', terminal: true });
  await accounts.projector.applied(ack.seq);
  await expectError(
    await fetch(`${http.url}/api/v1/unified/stream`, { headers: { authorization: `Bearer ${token}` } }),
    403,
    'tier_restricted',
  );
}, 30_000);
