/**
 * Console `GET /keys` is bounded and limited (real `{base_url}` app, real accounts, private
 * nats-server): an account that has had 160 keys is answered with the KEY_LIST_MAX most recently
 * created, for at most about two NATS requests per listed key (the connection's outgoing messages
 * counted around one listing); and listings per account are a token bucket (`keyListPerAccount`):
 * past its burst, 429 `rate_limited` with Retry-After.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { KEY_LIST_MAX } from '../../contracts/base-url-limits.ts';
import { CONSOLE_LIMITS } from '../../contracts/console-limits.ts';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';

const PASSWORD = 'Str0ng-Passw0rd!';
const KEYS = 160;
let stack: TestStack;
let token: string;
const created: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  const email = 'many-keys@example.com';
  const { account_id } = await stack.accounts.service.register({
    email,
    password: PASSWORD,
    plan: 'basic',
    jp_access: false,
  });
  for (let i = 0; i < KEYS; i++) {
    const k = await stack.accounts.service.createKey(
      account_id,
      { name: `k${i}`, scopes: [] },
      { trusted: true },
    );
    created.push(k.key_id);
  }
  const res = await fetch(`${stack.http.url}/api/v1/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  token = ((await res.json()) as { session_token: string }).session_token;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const list = () =>
  fetch(`${stack.http.url}/api/v1/console/keys`, { headers: { authorization: `Bearer ${token}` } });

it('lists at most KEY_LIST_MAX keys, the newest, for a bounded number of NATS requests', async () => {
  const before = stack.nats.nc.stats().outMsgs;
  const res = await list();
  const sent = stack.nats.nc.stats().outMsgs - before;
  expect(res.status).toBe(200);
  const ids = ((await res.json()) as { keys: { key_id: string }[] }).keys.map((k) => k.key_id);
  expect(ids).toEqual(created.slice(-KEY_LIST_MAX));
  // Two reads per listed key (record, last use), plus the listing of names and the account.
  expect(sent).toBeLessThanOrEqual(2 * KEY_LIST_MAX + 50);
});

it('refuses listings past the per-account bucket with 429 and Retry-After', async () => {
  let refused: Response | null = null;
  for (let i = 0; i <= CONSOLE_LIMITS.keyListPerAccount.burst && !refused; i++) {
    const res = await list();
    if (res.status === 429) refused = res;
    else await res.body?.cancel();
  }
  expect(refused).not.toBeNull();
  await expectError(refused as Response, 429, 'rate_limited');
  expect(Number((refused as Response).headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
});
