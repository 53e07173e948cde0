/**
 * Console API over real HTTP: registration and login with attribution (readable back), key
 * creation / listing / rotation / revocation, validation errors, HTTP hygiene, and projections
 * that rebuild from the ACCOUNTS stream to the same state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccountsProjector } from '../../consumers/accounts/projector.ts';
import { PROJECTION_POSITION_KEY } from '../../contracts/accounts.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { startTestGateway, type TestGateway, testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import type { TestNats } from '../support/nats.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig();
let server: TestNats;
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
let base: string;
let gw: TestGateway;

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ server, nats, accounts } = natsBase);
  http = await startTestHttp(nats, config, accounts);
  base = `${http.url}/api/v1/console`;
  gw = await startTestGateway(server.url, {}, { guard: 'keys' });
});

afterAll(async () => {
  await http?.close();
  await gw?.close();
  await natsBase?.close();
});

const post = (path: string, body: unknown, token?: string) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const get = (path: string, token: string) =>
  fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
const streamStatus = async (key: string) => {
  const ctl = new AbortController();
  const res = await fetch(`${gw.url}/api/v1/unified/stream`, {
    headers: { 'x-api-key': key },
    signal: ctl.signal,
  });
  ctl.abort();
  return res.status;
};

describe('registration and login', () => {
  it('records attribution on registration and on each login, readable back', async () => {
    const reg = await post('/register', {
      email: 'Quant@Example.com',
      password: 'C0rrect-Horse-Battery',
      plan: 'pro',
      jp_access: true,
      source: 'mcp-registry',
      campaign: 'launch-week',
      referrer: 'https://registry.example/servers/mdp',
      utm_source: 'registry',
      utm_medium: 'listing',
    });
    expect(reg.status).toBe(201);
    expect((await reg.json()).account_id).toMatch(/^acc_/);

    const first = await post('/login', {
      email: 'quant@example.com',
      password: 'C0rrect-Horse-Battery',
      source: 'web',
      utm_campaign: 'retarget',
    });
    expect(first.status).toBe(200);
    const { session_token, expires_at } = await first.json();
    expect(new Date(expires_at).getTime()).toBeGreaterThan(Date.now());
    await post('/login', {
      email: 'quant@example.com',
      password: 'C0rrect-Horse-Battery',
      source: 'campaign',
      campaign: 'newsletter-12',
    });

    const account = await (await get('/account', session_token)).json();
    expect(account).toMatchObject({
      email: 'quant@example.com',
      plan: 'pro',
      jp_access: true,
      regions: ['us', 'jp'],
      attribution: {
        source: 'mcp-registry',
        campaign: 'launch-week',
        referrer: 'https://registry.example/servers/mdp',
        utm_source: 'registry',
        utm_medium: 'listing',
      },
    });
    expect(account.logins.map((l: { attribution: unknown }) => l.attribution)).toEqual([
      { source: 'web', utm_campaign: 'retarget' },
      { source: 'campaign', campaign: 'newsletter-12' },
    ]);
    expect(JSON.stringify(account)).not.toContain('password');
  });

  it.each([
    [{ plan: 'pro' }, 'email'],
    [{ email: 'x@example.com', plan: 'pro' }, 'password'],
    [{ email: 'x@example.com', password: 12345678901, plan: 'pro' }, 'password'],
  ])('refuses %j (a field missing or of the wrong type) with 400 naming %s', async (body, field) => {
    await expectError(await post('/register', body), 400, 'invalid_params', field);
  });

  it.each([
    [{ email: 'x@example.com', password: 'short', plan: 'pro' }, 'password'],
    [{ email: 'x@example.com', password: 'lowercase12', plan: 'pro' }, 'password'],
    [{ email: 'not-an-email', password: 'C0rrect-Horse-Battery', plan: 'pro' }, 'email'],
    [{ email: 'x@example.com', password: 'C0rrect-Horse-Battery', plan: 'platinum' }, 'plan'],
    [{ email: 'x@example.com', password: 'C0rrect-Horse-Battery', plan: 'pro', admin: true }, 'admin'],
  ])('refuses %j with 422 naming %s', async (body, field) => {
    await expectError(await post('/register', body), 422, 'unprocessable', field);
  });

  it('refuses a duplicate email (any case) with 409, malformed JSON with 400, a huge body with 413', async () => {
    const body = { email: 'dup@example.com', password: 'C0rrect-Horse-Battery', plan: 'basic' };
    expect((await post('/register', body)).status).toBe(201);
    await expectError(await post('/register', { ...body, email: 'DUP@example.com' }), 409, 'email_taken');
    await expectError(await post('/register', '{"email": '), 400, 'parse_error');
    await expectError(
      await post('/register', { ...body, referrer: 'x'.repeat(1_100_000) }),
      413,
      'payload_too_large',
    );
  });

  it('refuses a wrong password and an unknown email alike', async () => {
    await expectError(
      await post('/login', { email: 'dup@example.com', password: 'wrong-password-1A' }),
      401,
      'invalid_credentials',
    );
    await expectError(
      await post('/login', { email: 'nobody@example.com', password: 'wrong-password-1A' }),
      401,
      'invalid_credentials',
    );
  });
});

describe('keys', () => {
  it('rotates without downtime: two keys work at once, the revoked one is dead at once', async () => {
    await post('/register', {
      email: 'rotate@example.com',
      password: 'C0rrect-Horse-Battery',
      plan: 'quant',
    });
    const { session_token: s } = await (
      await post('/login', { email: 'rotate@example.com', password: 'C0rrect-Horse-Battery' })
    ).json();
    const k1 = await (await post('/keys', { name: 'prod' }, s)).json();
    const k2res = await post('/keys', { name: 'prod-next', scopes: ['stream:read'] }, s);
    expect(k2res.status).toBe(201);
    const k2 = await k2res.json();
    expect(k1.key).toMatch(/^mdp_[0-9A-Za-z]{38}$/);
    expect(await streamStatus(k1.key)).toBe(200);
    expect(await streamStatus(k2.key)).toBe(200);

    const del = await fetch(`${base}/keys/${k1.key_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${s}` },
    });
    expect(del.status).toBe(204);
    expect(await streamStatus(k1.key)).toBe(401);
    expect(await streamStatus(k2.key)).toBe(200);

    const { keys } = await (await get('/keys', s)).json();
    expect(keys.map((k: { name: string; status: string }) => [k.name, k.status])).toEqual([
      ['prod', 'revoked'],
      ['prod-next', 'active'],
    ]);
    expect(keys[1]).toMatchObject({ tier: 'quant', scopes: ['stream:read'], prefix: k2.key.slice(0, 10) });
    expect(JSON.stringify(keys)).not.toContain(k2.key);
  });

  it('needs a valid session: none, garbage, or logged out → 401 session_invalid', async () => {
    await expectError(await get('/keys', 'nope'), 401, 'session_invalid');
    await post('/register', { email: 'out@example.com', password: 'C0rrect-Horse-Battery', plan: 'pro' });
    const { session_token: s } = await (
      await post('/login', { email: 'out@example.com', password: 'C0rrect-Horse-Battery' })
    ).json();
    expect((await post('/logout', {}, s)).status).toBe(204);
    await expectError(await get('/account', s), 401, 'session_invalid');
    await expectError(
      await fetch(`${base}/keys/key_nope`, { method: 'DELETE', headers: { authorization: 'Bearer x' } }),
      401,
      'session_invalid',
    );
  });
});

describe('projections', () => {
  it('rebuild from the ACCOUNTS stream to exactly the same state', async () => {
    // The projection's records, without where a projector was (its stored position).
    const snapshot = async () => {
      const out: Record<string, unknown> = {};
      for (const [name, bucket] of Object.entries(accounts.buckets))
        out[name] = Object.fromEntries(
          [...(await bucket.entries())].filter(([k]) => k !== PROJECTION_POSITION_KEY),
        );
      return out;
    };
    // The running projector stops first: it would store its position again over the deletion.
    accounts.projector.stop();
    const before = await snapshot();
    expect(Object.keys(before.keys as object).length).toBeGreaterThanOrEqual(2);
    for (const bucket of Object.values(accounts.buckets))
      for (const k of (await bucket.entries()).keys()) await bucket.delete(k);
    expect(Object.keys((await snapshot()).accounts as object)).toEqual([]);

    const rebuilt = await AccountsProjector.start(nats, createLogger('silent'));
    await rebuilt.applied(await lastSeq(nats, STREAMS.ACCOUNTS));
    rebuilt.stop();
    expect(await snapshot()).toEqual(before);
  });
});
