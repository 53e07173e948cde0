/**
 * One account's distinct `/stream/live` sessions are counted across processes (two real
 * `{base_url}` apps, real guard and accounts, one private nats-server): with
 * LIVE_SESSIONS_PER_ACCOUNT split between the two, a new (symbol, seed) on either is 429
 * `subscription_limit`, while a session the account already holds (on the other process) still
 * opens, counted once; another account is unaffected; once the streams close, the account opens a
 * new session again. Before, each process counted only its own: the account held twice the cap.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LIVE_SESSIONS_PER_ACCOUNT } from '../../contracts/base-url-limits.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let a: TestHttp;
let b: TestHttp;
const open: AbortController[] = [];

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  a = await startTestHttp(nats, config, accounts);
  b = await startTestHttp(nats, config, accounts);
}, 60_000);

afterAll(async () => {
  for (const c of open) c.abort();
  await a?.close();
  await b?.close();
  await natsBase?.close();
});

/** Opens `/stream/live` for `seed` on `base`: the response (a 200 stays open until closed). */
async function live(key: string, seed: number, base: string): Promise<Response> {
  const ctl = new AbortController();
  const res = await fetch(`${base}/stream/live?symbol=BTC&seed=${seed}`, {
    headers: { 'x-api-key': key, accept: 'text/event-stream' },
    signal: ctl.signal,
  });
  if (res.status === 200) open.push(ctl);
  return res;
}

/** 429 subscription_limit (the status first: a 200 stream never ends, its body is not read). */
async function refused(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  await expectError(res, 429, 'subscription_limit');
}

it("counts an account's distinct live sessions across processes", async () => {
  const pro = await accounts.key('pro');
  const half = Math.floor(LIVE_SESSIONS_PER_ACCOUNT / 2);
  for (let seed = 1; seed <= LIVE_SESSIONS_PER_ACCOUNT; seed++)
    expect((await live(pro.key, seed, seed <= half ? a.url : b.url)).status).toBe(200);
  // A new session on either process is past the account's cap.
  await refused(await live(pro.key, 100, a.url));
  await refused(await live(pro.key, 101, b.url));
  // A session it holds on the other process is the same session: it opens.
  expect((await live(pro.key, 1, b.url)).status).toBe(200);
  // Another account is unaffected.
  const other = await accounts.key('pro');
  expect((await live(other.key, 100, b.url)).status).toBe(200);

  // Closing the streams gives the sessions back: a new seed opens (leases released).
  for (const c of open.splice(0)) c.abort();
  await eventually(
    async () => {
      const res = await live(pro.key, 102, a.url);
      await res.body?.cancel();
      return res.status === 200;
    },
    20_000,
    'a new session after the others closed',
    250,
  );
});
