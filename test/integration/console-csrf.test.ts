/**
 * The web console's cookie session: login sets an HttpOnly, SameSite=Strict cookie; a
 * state-changing request on the cookie alone, without the CSRF token or with a wrong one, is
 * refused (403) and changes nothing; with the token it passes; a browser's cross-site request is
 * refused even with valid credentials; bearer sessions need no token (API clients); the unified
 * host refuses the cookie session; the dashboard proxy takes it, and one viewer's streams are
 * capped by its own plan. A malformed `Origin` or session cookie is 400 `invalid_params`, not 500.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServiceKey, type ServiceKey } from '../../app/service-key.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

let base: BaseStack;
let unified: TestGateway;
let accounts: TestAccounts;
let http: TestHttp;
let service: ServiceKey;
const password = 'C0rrect-Horse-Battery';

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

const api = (path: string) => `${http.url}/api/v1/console${path}`;
const json = { 'content-type': 'application/json' };

/** A cookie session of a new account: the Cookie header and the CSRF token. */
async function cookieSession(plan: 'basic' | 'pro' = 'pro') {
  const email = `csrf-${plan}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  await accounts.service.register({ email, password, plan, jp_access: false });
  const res = await fetch(api('/session'), {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  const setCookie = res.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^mdp_session=mds_[^;]+; Max-Age=\d+; Path=\/; HttpOnly; SameSite=Strict$/);
  const body = (await res.json()) as { csrf_token: string; session_token?: string };
  expect(body.session_token).toBeUndefined(); // the page's script never sees the session
  return { cookie: setCookie.split(';')[0] as string, csrf: body.csrf_token, email };
}

const keyCount = async (cookie: string) =>
  ((await (await fetch(api('/keys'), { headers: { cookie } })).json()) as { keys: unknown[] }).keys.length;

it('refuses a state-changing request on the cookie without its CSRF token, and nothing changes', async () => {
  const { cookie, csrf } = await cookieSession();
  await expectError(
    await fetch(api('/keys'), { method: 'POST', headers: { ...json, cookie }, body: '{"name":"x"}' }),
    403,
    'forbidden',
  );
  await expectError(
    await fetch(api('/keys'), {
      method: 'POST',
      // A wrong token: its first character changed (the last ones may hold only padding bits).
      headers: { ...json, cookie, 'x-csrf-token': `${csrf[0] === 'A' ? 'B' : 'A'}${csrf.slice(1)}` },
      body: '{"name":"x"}',
    }),
    403,
    'forbidden',
  );
  expect(await keyCount(cookie)).toBe(0);
  const created = await fetch(api('/keys'), {
    method: 'POST',
    headers: { ...json, cookie, 'x-csrf-token': csrf },
    body: '{"name":"x"}',
  });
  expect(created.status).toBe(201);
  const { key_id } = (await created.json()) as { key_id: string };
  expect(await keyCount(cookie)).toBe(1);
  // PATCH, DELETE and logout are state-changing too.
  for (const [method, path, body] of [
    ['PATCH', `/keys/${key_id}`, '{"name":"y"}'],
    ['DELETE', `/keys/${key_id}`, undefined],
    ['POST', '/logout', undefined],
  ] as const)
    await expectError(
      await fetch(api(path), { method, headers: { ...json, cookie }, ...(body ? { body } : {}) }),
      403,
      'forbidden',
    );
  const patched = await fetch(api(`/keys/${key_id}`), {
    method: 'PATCH',
    headers: { ...json, cookie, 'x-csrf-token': csrf },
    body: '{"name":"y","scopes":["generate"]}',
  });
  expect(patched.status).toBe(200);
  expect(await patched.json()).toMatchObject({ name: 'y', scopes: ['generate'] });
});

it("refuses a browser's cross-site request even with valid credentials", async () => {
  const { cookie, csrf } = await cookieSession();
  for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<
    string,
    string
  >[])
    await expectError(
      await fetch(api('/keys'), {
        method: 'POST',
        headers: { ...json, cookie, 'x-csrf-token': csrf, ...headers },
        body: '{"name":"x"}',
      }),
      403,
      'forbidden',
    );
  await expectError(
    await fetch(api('/login'), {
      method: 'POST',
      headers: { ...json, origin: 'https://evil.example' },
      body: JSON.stringify({ email: 'a@example.com', password }),
    }),
    403,
    'forbidden',
  );
});

it('keeps bearer sessions working without a token, and logout ends the cookie too', async () => {
  const email = `bearer-${Date.now()}@example.com`;
  await accounts.service.register({ email, password, plan: 'pro', jp_access: false });
  const { session_token } = await accounts.service.login({ email, password });
  const res = await fetch(api('/keys'), {
    method: 'POST',
    headers: { ...json, authorization: `Bearer ${session_token}` },
    body: '{"name":"api client"}',
  });
  expect(res.status).toBe(201);

  const { cookie, csrf } = await cookieSession();
  const out = await fetch(api('/logout'), { method: 'POST', headers: { cookie, 'x-csrf-token': csrf } });
  expect(out.status).toBe(204);
  expect(out.headers.get('set-cookie')).toMatch(/^mdp_session=; Max-Age=0;/);
  await expectError(await fetch(api('/keys'), { headers: { cookie } }), 401, 'session_invalid');
});

it('refuses a cookie session on the unified host; the dashboard proxy takes it within the plan', async () => {
  const { cookie } = await cookieSession();
  await expectError(
    await fetch(`${unified.url}/api/v1/unified/stream`, { headers: { cookie } }),
    401,
    'invalid_key',
  );
  const open: AbortController[] = [];
  try {
    for (let i = 0; i < 10; i++) {
      const ctl = new AbortController();
      open.push(ctl);
      const res = await fetch(`${http.url}/api/v1/unified/stream?coin=BTC`, {
        headers: { cookie },
        signal: ctl.signal,
      });
      expect(res.status).toBe(200);
    }
    // The eleventh stream of this viewer (another session of the same account counts too) is refused…
    await expectError(
      await fetch(`${http.url}/api/v1/unified/stream?coin=BTC`, { headers: { cookie } }),
      429,
      'subscription_limit',
    );
    // …while another viewer still streams: one viewer cannot exhaust the service key.
    const other = await cookieSession();
    const ctl = new AbortController();
    open.push(ctl);
    const res = await fetch(`${http.url}/api/v1/unified/stream?coin=BTC`, {
      headers: { cookie: other.cookie },
      signal: ctl.signal,
    });
    expect(res.status).toBe(200);
  } finally {
    for (const c of open) c.abort();
  }
  const basic = await cookieSession('basic');
  await expectError(
    await fetch(`${http.url}/api/v1/unified/stream`, { headers: { cookie: basic.cookie } }),
    403,
    'tier_restricted',
  );
});

it('answers a malformed Origin or session cookie with 400 invalid_params, not 500', async () => {
  const badOrigin = await fetch(api('/session'), {
    method: 'POST',
    headers: { ...json, origin: 'http://[' },
    body: JSON.stringify({ email: 'nobody@example.com', password }),
  });
  await expectError(badOrigin, 400, 'invalid_params', 'Origin');
  for (const path of ['/keys', '/session']) {
    const res = await fetch(api(path), { headers: { cookie: 'other=1; mdp_session=%E0%A4%A' } });
    await expectError(res, 400, 'invalid_params', 'Cookie');
  }
  const proxied = await fetch(`${http.url}/api/v1/unified/stream`, {
    headers: { cookie: 'mdp_session=%zz' },
  });
  await expectError(proxied, 400, 'invalid_params', 'Cookie');
});
