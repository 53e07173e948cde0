/**
 * Maintenance windows across real processes (`gateway http` and `gateway unified`, one NATS): a
 * window scheduled on the `{base_url}` process reaches the unified process through the status
 * projection. When it starts, the open SSE stream gets the terminal `maintenance` event; new
 * streams, `/healthz` and covered `{base_url}` routes answer 503 `maintenance` with Retry-After
 * = seconds to the window's end; the status API, /metrics and the console stay up; when the
 * window ends (or is cancelled) service resumes with no restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService } from '../support/process.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const OPERATOR = 'ops@example.com';
const PASSWORD = 'Str0ng-Passw0rd!';

let server: TestNats;
let base: BaseStack;
let accounts: TestAccounts;
const services: ServiceProcess[] = [];
let httpUrl: string;
let unifiedUrl: string;
let adminKey: string;
let userKey: string;

const stream = (onMessage: (m: SseMessage) => void = () => {}) =>
  openSse(`${unifiedUrl}/api/v1/unified/stream`, onMessage, { 'x-api-key': userKey });

const schedule = async (startsInMs: number, endsInMs: number, transports = ['unified', 'simulation']) => {
  const now = Date.now();
  const res = await fetch(`${httpUrl}/api/v1/status/maintenance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': adminKey },
    body: JSON.stringify({
      regions: ['us'],
      transports,
      starts_at: new Date(now + startsInMs).toISOString(),
      ends_at: new Date(now + endsInMs).toISOString(),
      message: 'database upgrade',
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; ends_at: string };
};

const retryAfter = (res: { headers: Headers }) => Number(res.headers.get('retry-after'));

/** The status a new stream gets (an opened one is closed again at once). */
const probe = async () => {
  const s = await stream();
  s.abort();
  return s.status;
};

beforeAll(async () => {
  const config = testConfig();
  base = await startBase(config);
  ({ server, accounts } = base);
  const op = await accounts.service.register({
    email: OPERATOR,
    password: PASSWORD,
    plan: 'pro',
    jp_access: false,
  });
  await accounts.grantOperator(OPERATOR);
  adminKey = (await accounts.service.createKey(op.account_id, { name: 'ops', scopes: ['status:admin'] })).key;
  userKey = (await accounts.key('pro')).key;
  const env = {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    HTTP_PORT: '0',
    UNIFIED_PORT_US: '0',
  };
  const http = startService(['gateway', 'http'], env);
  const unified = startService(['gateway', 'unified', '--region', 'us'], env);
  services.push(http, unified);
  httpUrl = (await http.waitForLog((l) => l.msg === 'http (console) listening', 60_000)).url as string;
  unifiedUrl = new URL(
    (await unified.waitForLog((l) => l.msg === 'unified stream listening', 60_000)).url as string,
  ).origin;
}, 120_000);

afterAll(async () => {
  await killAll(services, 'SIGTERM');
  await base?.close();
});

describe('a maintenance window across processes', () => {
  it('ends open streams when it starts, refuses new requests until it ends, then service resumes', async () => {
    expect((await fetch(`${unifiedUrl}/healthz`)).status).toBe(200);
    const messages: SseMessage[] = [];
    const open = await stream((m) => messages.push(m));
    expect(open.status).toBe(200);

    // Starts in 2 s (a timer in the unified process), ends 12 s from now.
    const window = await schedule(2_000, 12_000);
    await open.done; // the server ends the stream
    const last = messages.at(-1);
    expect(last?.event).toBe('error');
    expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ code: 'maintenance', terminal: true });

    const refused = await stream();
    expect(refused.status).toBe(503);
    expect(retryAfter(refused)).toBeGreaterThanOrEqual(1);
    expect(retryAfter(refused)).toBeLessThanOrEqual(
      Math.ceil((Date.parse(window.ends_at) - Date.now()) / 1_000) + 1,
    );
    const health = await fetch(`${unifiedUrl}/healthz`);
    expect(retryAfter(health)).toBeGreaterThanOrEqual(1);
    await expectError(health, 503, 'maintenance');
    // {base_url} routes of a covered transport (simulation) are refused too…
    const presets = await fetch(`${httpUrl}/mcp/presets`, { headers: { 'x-api-key': userKey } });
    expect(retryAfter(presets)).toBeGreaterThanOrEqual(1);
    await expectError(presets, 503, 'maintenance');

    // …while the status API, /metrics and the console stay up.
    const status = await fetch(`${httpUrl}/api/v1/status`, { headers: { 'x-api-key': userKey } });
    expect(status.status).toBe(200);
    const body = (await status.json()) as { status: string; transports: unknown[] };
    expect(body.status).toBe('maintenance');
    expect(body.transports).toContainEqual({ region: 'us', transport: 'unified', state: 'maintenance' });
    expect(body.transports).toContainEqual({ region: 'jp', transport: 'unified', state: 'up' });
    expect((await fetch(`${httpUrl}/metrics`, { headers: { 'x-api-key': userKey } })).status).toBe(200);
    expect((await fetch(`${httpUrl}/api/v1/public/status`)).status).toBe(200);
    const login = await fetch(`${httpUrl}/api/v1/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: OPERATOR, password: PASSWORD }),
    });
    expect(login.status).toBe(200);

    // The window ends: the same processes serve again.
    await eventually(async () => (await fetch(`${unifiedUrl}/healthz`)).status === 200, 30_000);
    expect(await probe()).toBe(200);
    expect((await fetch(`${httpUrl}/mcp/presets`, { headers: { 'x-api-key': userKey } })).status).toBe(200);
  }, 60_000);

  it('a window of another transport leaves the stream alone; cancelling an active window ends it at once', async () => {
    const other = await schedule(-1_000, 3_600_000, ['jsonrpc']);
    expect(await probe()).toBe(200);
    const del = (id: string) =>
      fetch(`${httpUrl}/api/v1/status/maintenance/${id}`, {
        method: 'DELETE',
        headers: { 'x-api-key': adminKey },
      });
    expect((await del(other.id)).status).toBe(204);

    const long = await schedule(-1_000, 3_600_000);
    await eventually(async () => (await probe()) === 503);
    const refused = await stream();
    expect(retryAfter(refused)).toBeGreaterThan(3_000);
    expect((await del(long.id)).status).toBe(204);
    await eventually(async () => (await probe()) === 200);
  }, 60_000);
});
