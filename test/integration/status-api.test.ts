/**
 * The status API on the real `{base_url}` app (real guard, real accounts, private nats-server):
 * status:admin is never implied and only operators may mint it; incidents move open → monitoring
 * → resolved; the public summary shows no account data; the error log answers an account about
 * its own request ids only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { buildHttpApp, type HttpApp } from '../../gateways/http/app.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const OPERATOR = 'ops@example.com';
const PASSWORD = 'Str0ng-Passw0rd!';

let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: HttpApp;
let edgeStop: () => Promise<void>;
let url: string;

async function session(email: string): Promise<string> {
  await accounts.service.register({ email, password: PASSWORD, plan: 'pro', jp_access: false });
  const res = await fetch(`${url}/api/v1/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  return ((await res.json()) as { session_token: string }).session_token;
}

const mintKey = (token: string, scopes: string[]) =>
  fetch(`${url}/api/v1/console/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'k', scopes }),
  });

const call = (method: string, path: string, key: string | null, body?: unknown) =>
  fetch(`${url}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

let operatorSession: string;
let adminKey: string;
let plainKey: string;

beforeAll(async () => {
  const config = testConfig();
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  const log = createLogger(config.LOG_LEVEL, 'http');
  const edge = await startEdgeGuard(nats, config, log);
  edgeStop = () => edge.part.stop();
  http = await buildHttpApp({
    nats,
    accounts: accounts.service,
    guard: edge.guard,
    status: edge.status,
    config,
    log,
  });
  url = await http.app.listen({ host: '127.0.0.1', port: 0 });
  operatorSession = await session(OPERATOR);
  await accounts.grantOperator(OPERATOR);
  const admin = await mintKey(operatorSession, ['status:admin', 'status:read']);
  expect(admin.status).toBe(201);
  adminKey = ((await admin.json()) as { key: string }).key;
  plainKey = (await accounts.key('pro')).key;
}, 60_000);

afterAll(async () => {
  await http?.shutdown();
  await edgeStop?.();
  await natsBase?.close();
});

describe('status:admin', () => {
  it('is refused to a non-operator at key creation, and never implied by an empty scope set', async () => {
    const other = await session('someone@example.com');
    await expectError(await mintKey(other, ['status:admin']), 403, 'forbidden');
    expect((await mintKey(other, ['status:read'])).status).toBe(201);
    // A key without scopes reads the status but administers nothing.
    expect((await call('GET', '/api/v1/status', plainKey)).status).toBe(200);
    await expectError(
      await call('POST', '/api/v1/status/incidents', plainKey, { title: 't', message: 'm' }),
      403,
      'forbidden',
    );
    await expectError(await call('GET', '/api/v1/status/maintenance', plainKey), 403, 'forbidden');
    await expectError(await call('GET', '/api/v1/status', null), 401, 'invalid_key');
  });
});

describe('incidents', () => {
  it('open → monitoring → resolved, with updates; shown in the status while unresolved', async () => {
    const created = await call('POST', '/api/v1/status/incidents', adminKey, {
      title: 'JP unified latency',
      message: 'investigating',
      regions: ['jp'],
      transports: ['unified'],
    });
    expect(created.status).toBe(201);
    const inc = (await created.json()) as { id: string; status: string; created_by: string };
    expect(inc.status).toBe('open');

    type Status = {
      transports: { region: string | null; transport: string; state: string }[];
      incidents: { id: string }[];
      md_stream: { first_seq: number; last_seq: number };
      feeds: unknown[];
    };
    // The status reads this process's board, which hears the incident just after the command's
    // own projection confirmed it (as the keyless summary below).
    const status = await eventually(
      async () => {
        const body = (await (await call('GET', '/api/v1/status', plainKey)).json()) as Status;
        return body.incidents.some((i) => i.id === inc.id) ? body : null;
      },
      10_000,
      'the incident in the status',
    );
    expect(status.incidents.map((i) => i.id)).toContain(inc.id);
    expect(status.transports).toContainEqual({ region: 'jp', transport: 'unified', state: 'degraded' });
    expect(status.transports).toContainEqual({ region: 'us', transport: 'unified', state: 'up' });
    expect(status.md_stream).toEqual({ first_seq: expect.any(Number), last_seq: expect.any(Number) });
    expect(Array.isArray(status.feeds)).toBe(true);

    const path = `/api/v1/status/incidents/${inc.id}`;
    const monitoring = await call('PATCH', path, adminKey, { status: 'monitoring', message: 'fix deployed' });
    expect(((await monitoring.json()) as { status: string }).status).toBe('monitoring');
    const resolved = (await (
      await call('PATCH', path, adminKey, { status: 'resolved', message: 'all good' })
    ).json()) as { status: string; updates: { status: string; message: string }[]; resolved_at: string };
    expect(resolved.status).toBe('resolved');
    expect(resolved.updates.map((u) => u.status)).toEqual(['open', 'monitoring', 'resolved']);
    await expectError(
      await call('PATCH', path, adminKey, { status: 'open', message: 'again' }),
      422,
      'unprocessable',
    );
    await expectError(
      await call('PATCH', '/api/v1/status/incidents/inc_0000000000000000', adminKey, { message: 'x' }),
      404,
      'not_found',
    );
    await expectError(
      await call('PATCH', path, adminKey, { status: 'gone', message: 'x' }),
      422,
      'unprocessable',
    );
    await expectError(await call('PATCH', path, adminKey, {}), 400, 'invalid_params');

    const listed = await eventually(async () => {
      const body = (await (await call('GET', '/api/v1/status/incidents', adminKey)).json()) as {
        incidents: { id: string; status: string }[];
      };
      return body.incidents.find((i) => i.id === inc.id && i.status === 'resolved');
    });
    expect(listed).toBeDefined();
  });

  it('the keyless summary carries no account data', async () => {
    await call('POST', '/api/v1/status/incidents', adminKey, { title: 'API errors', message: 'looking' });
    // The summary reads this process's board, which hears the incident just after the command's
    // own projection confirmed it.
    const text = await eventually(
      async () => {
        const res = await call('GET', '/api/v1/public/status', null);
        expect(res.status).toBe(200);
        const body = await res.text();
        // The board has also heard that the previous test's incident was resolved.
        return body.includes('API errors') && !body.includes('JP unified latency') ? body : null;
      },
      10_000,
      'the incident in the public summary',
    );
    expect(text).not.toMatch(/created_by|acc_/);
    expect(JSON.parse(text)).toMatchObject({
      status: 'degraded',
      incidents: [expect.objectContaining({ title: 'API errors' })],
    });
  });

  it('maintenance windows are validated', async () => {
    const now = Date.now();
    const at = (ms: number) => new Date(now + ms).toISOString();
    const base = { regions: ['us'], transports: ['unified'], message: 'upgrade' };
    await expectError(
      await call('POST', '/api/v1/status/maintenance', adminKey, {
        ...base,
        starts_at: at(60_000),
        ends_at: at(30_000),
      }),
      422,
      'unprocessable',
      'ends_at',
    );
    await expectError(
      await call('POST', '/api/v1/status/maintenance', adminKey, {
        ...base,
        starts_at: at(-60_000),
        ends_at: at(-30_000),
      }),
      422,
      'unprocessable',
      'ends_at',
    );
    await expectError(
      await call('POST', '/api/v1/status/maintenance', adminKey, {
        ...base,
        transports: ['smtp'],
        starts_at: at(60_000),
        ends_at: at(90_000),
      }),
      422,
      'unprocessable',
    );
    const upcoming = await call('POST', '/api/v1/status/maintenance', adminKey, {
      ...base,
      starts_at: at(3_600_000),
      ends_at: at(7_200_000),
    });
    expect(upcoming.status).toBe(201);
    const w = (await upcoming.json()) as { id: string; state: string };
    expect(w.state).toBe('upcoming');
    // The summary reads this process's board, which hears the window just after the command.
    const pub = await eventually(
      async () => {
        const body = (await (await call('GET', '/api/v1/public/status', null)).json()) as {
          maintenance: { upcoming: { id: string }[] };
        };
        return body.maintenance.upcoming.some((x) => x.id === w.id) ? body : null;
      },
      10_000,
      'the window in the public summary',
    );
    expect(pub.maintenance.upcoming.map((x) => x.id)).toContain(w.id);
    expect((await call('DELETE', `/api/v1/status/maintenance/${w.id}`, adminKey)).status).toBe(204);
    await expectError(
      await call('DELETE', '/api/v1/status/maintenance/mnt_nope', adminKey),
      404,
      'not_found',
    );
  });
});

describe('error log', () => {
  it("an account finds its own errors by request id, and never another account's", async () => {
    const a = await session('a@example.com');
    const b = await session('b@example.com');
    const keyOf = async (token: string) => ((await (await mintKey(token, [])).json()) as { key: string }).key;
    const [keyA, keyB] = [await keyOf(a), await keyOf(b)];
    const failA = await expectError(await call('GET', '/data/jobs/sim_batch_nope', keyA), 404, 'not_found');
    const failB = await expectError(await call('GET', '/mcp/venues/nasdaq', keyB), 404, 'not_found');
    const lookup = (token: string, requestId: unknown) =>
      fetch(`${url}/api/v1/console/errors?request_id=${requestId}`, {
        headers: { authorization: `Bearer ${token}` },
      });

    const found = await eventually(async () => {
      const res = await lookup(a, failA.request_id);
      return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : null;
    });
    expect(found).toMatchObject({
      request_id: failA.request_id,
      code: 'not_found',
      status: 404,
      method: 'GET',
      route: '/data/jobs/:job_id',
      account_id: expect.stringMatching(/^acc_/),
      at: expect.any(String),
    });
    await eventually(async () => (await lookup(b, failB.request_id)).status === 200);
    await expectError(await lookup(b, failA.request_id), 404, 'not_found');
    await expectError(await lookup(a, failB.request_id), 404, 'not_found');
    await expectError(await lookup(a, 'x'), 400, 'invalid_params', 'request_id');
    // A console call refused under a session is the session's account's error too.
    const consoleFail = await expectError(
      await fetch(`${url}/api/v1/console/keys/key_nope`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${a}` },
      }),
      404,
      'not_found',
    );
    const consoleFound = await eventually(async () => {
      const res = await lookup(a, consoleFail.request_id);
      return res.status === 200 ? ((await res.json()) as Record<string, unknown>) : null;
    });
    expect(consoleFound).toMatchObject({ code: 'not_found', route: '/api/v1/console/keys/:key_id' });
    await expectError(await lookup(b, consoleFail.request_id), 404, 'not_found');
    await expectError(
      await fetch(`${url}/api/v1/console/errors?request_id=${failA.request_id}`),
      401,
      'session_invalid',
    );
  });
});
