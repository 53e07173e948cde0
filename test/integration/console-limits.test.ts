/**
 * Console abuse limits and plan policy over the real `{base_url}` app: registrations, logins and
 * key creations are limited per client address and per account, failed logins back off, failed
 * API-key attempts are limited per address, each with 429 and `Retry-After`; with self-service
 * plans off, registration starts on Basic and only an operator (made by `operator grant`)
 * changes a plan, which reaches the account's keys.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../contracts/accounts.ts';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import {
  CONSOLE_LIMITS,
  KEY_FAILURES_PER_ADDRESS,
  LOGIN_BACKOFF_PER_PAIR,
} from '../../contracts/console-limits.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
const PASSWORD = 'C0rrect-Horse-Battery';
const OPERATOR = 'ops@example.com';

beforeAll(async () => {
  stack = await startStack({ SELF_SERVICE_PLANS: 'false' });
});

afterAll(async () => {
  await stack?.close();
});

type Call = {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  token?: string;
  ip: string;
};

async function call({ method = 'POST', path, body, token, ip }: Call) {
  const res = await stack.http.app.inject({
    method,
    url: path.startsWith('/') ? path : `/api/v1/console/${path}`,
    remoteAddress: ip,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body ? { payload: JSON.stringify(body) } : {}),
  });
  return {
    status: res.statusCode,
    body: res.json() as Record<string, unknown>,
    retryAfter: res.headers['retry-after'],
  };
}

const expect429 = (r: { status: number; body: Record<string, unknown>; retryAfter: unknown }) => {
  expect(r.status).toBe(429);
  expect(r.body.error).toBe('rate_limited');
  expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
};

async function registerAndLogin(email: string, ip: string): Promise<string> {
  expect((await call({ path: 'register', body: { email, password: PASSWORD }, ip })).status).toBe(201);
  const login = await call({ path: 'login', body: { email, password: PASSWORD }, ip });
  expect(login.status).toBe(200);
  return login.body.session_token as string;
}

describe('limits', () => {
  it('limits registrations per address', async () => {
    const n = CONSOLE_LIMITS.registerPerAddress.burst;
    for (let i = 0; i < n; i++)
      expect(
        (
          await call({
            path: 'register',
            body: { email: `r${i}@example.com`, password: PASSWORD },
            ip: '10.0.0.1',
          })
        ).status,
      ).toBe(201);
    expect429(
      await call({
        path: 'register',
        body: { email: 'r-more@example.com', password: PASSWORD },
        ip: '10.0.0.1',
      }),
    );
    expect(
      (
        await call({
          path: 'register',
          body: { email: 'r-more@example.com', password: PASSWORD },
          ip: '10.0.0.2',
        })
      ).status,
    ).toBe(201);
  }, 60_000);

  it('backs off after failed logins from the same address, even for the right password; not from elsewhere', async () => {
    await registerAndLogin('victim@example.com', '10.0.1.1');
    const attempt = (password: string, ip: string) =>
      call({ path: 'login', body: { email: 'victim@example.com', password }, ip });
    for (let i = 0; i <= LOGIN_BACKOFF_PER_PAIR.freeFailures; i++)
      expect((await attempt('wrong-Passw0rd!', '10.0.1.2')).status).toBe(401);
    expect429(await attempt(PASSWORD, '10.0.1.2'));
    // The lock is the (email, address) pair's: the user elsewhere is not locked out (issue 27).
    expect((await attempt(PASSWORD, '10.0.1.3')).status).toBe(200);
  }, 60_000);

  it('limits key creation per account', async () => {
    const token = await registerAndLogin('keys@example.com', '10.0.2.1');
    const n = CONSOLE_LIMITS.keysPerAccount.burst;
    for (let i = 0; i < n; i++)
      expect((await call({ path: 'keys', body: { name: `k${i}` }, token, ip: '10.0.2.1' })).status).toBe(201);
    expect429(await call({ path: 'keys', body: { name: 'more' }, token, ip: '10.0.2.2' }));
  }, 60_000);

  it('limits failed API-key attempts per address, not for other addresses', async () => {
    const manifest = (ip: string, key: string) =>
      stack.http.app.inject({
        method: 'GET',
        url: '/mcp/manifest',
        remoteAddress: ip,
        headers: { 'x-api-key': key },
      });
    for (let i = 0; i < KEY_FAILURES_PER_ADDRESS.burst; i++)
      expect((await manifest('10.0.3.1', generateApiKey())).statusCode).toBe(401);
    const refused = await manifest('10.0.3.1', generateApiKey());
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await manifest('10.0.3.2', generateApiKey())).statusCode).toBe(401);
  }, 60_000);
});

describe('plans', () => {
  it('starts self-registered accounts on Basic when self-service plans are off', async () => {
    const r = await call({
      path: 'register',
      body: { email: 'wants-quant@example.com', password: PASSWORD, plan: 'quant', jp_access: true },
      ip: '10.0.4.1',
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ plan: 'basic', jp_access: false });
  });

  it('lets an operator change a plan (and the keys follow); anyone else gets 403', async () => {
    const userToken = await registerAndLogin('customer@example.com', '10.0.5.1');
    const key = await call({ path: 'keys', body: { name: 'main' }, token: userToken, ip: '10.0.5.1' });
    const accountId = (await call({ method: 'GET', path: 'account', token: userToken, ip: '10.0.5.1' })).body
      .account_id as string;
    const opsToken = await registerAndLogin(OPERATOR, '10.0.5.2');
    await stack.accounts.grantOperator(OPERATOR);

    const denied = await call({
      method: 'PUT',
      path: `accounts/${accountId}/plan`,
      body: { plan: 'quant' },
      token: userToken,
      ip: '10.0.5.1',
    });
    expect([denied.status, denied.body.error]).toEqual([403, 'forbidden']);

    const changed = await call({
      method: 'PUT',
      path: `accounts/${accountId}/plan`,
      body: { plan: 'pro', jp_access: true },
      token: opsToken,
      ip: '10.0.5.2',
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ account_id: accountId, plan: 'pro', jp_access: true });
    expect(
      (await call({ method: 'GET', path: 'account', token: userToken, ip: '10.0.5.1' })).body,
    ).toMatchObject({ plan: 'pro', jp_access: true });
    const record = (await stack.accounts.buckets.keys.get(
      stack.accounts.secrets.keyHash(key.body.key as string),
    )) as KeyRecord;
    expect(record).toMatchObject({ tier: 'pro', jp_access: true });

    const missing = await call({
      method: 'PUT',
      path: 'accounts/acc_nope/plan',
      body: { plan: 'pro' },
      token: opsToken,
      ip: '10.0.5.2',
    });
    expect(missing.status).toBe(404);
  });
});
