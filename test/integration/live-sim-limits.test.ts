/**
 * `/stream/live` is bounded per key, per account and per process (real `{base_url}` app, real
 * guard and accounts, private nats-server), each refusal with its catalogue error:
 * - a key's live streams count in its concurrent-stream cap (Pro 10; Basic BASIC_SIMULATION_STREAMS):
 *   one more → 429 `subscription_limit`;
 * - one account's clients hold at most LIVE_SESSIONS_PER_ACCOUNT distinct (symbol, seed) sessions
 *   on a process: a new seed past it → 429 `subscription_limit`, an already-held one still opens;
 * - a process holds at most LIVE_SESSIONS_PER_PROCESS sessions: a new one past it → 503 `overload`;
 * and a refused start leaves no session behind: the process holds (and has produced) exactly the
 * sessions admitted, and once streams close their slots come back. A session whose start failed
 * (its stream missing: 503 `feed_unavailable`) is not kept: once the stream is back, it starts.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setupStreams } from '../../app/streams.ts';
import { BASIC_SIMULATION_STREAMS, LIVE_SESSIONS_PER_ACCOUNT } from '../../contracts/base-url-limits.ts';
import { TIER_LIMITS } from '../../contracts/limits.ts';
import { STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const PER_PROCESS = LIVE_SESSIONS_PER_ACCOUNT + 2;
const config = testConfig({ LIVE_SESSIONS_PER_PROCESS: String(PER_PROCESS) });
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: TestHttp;
/** A second process on the same NATS, for the failed start. */
let second: TestHttp;
const open: AbortController[] = [];

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  http = await startTestHttp(nats, config, accounts);
  second = await startTestHttp(nats, config, accounts);
});

afterAll(async () => {
  for (const c of open) c.abort();
  await http?.close();
  await second?.close();
  await natsBase?.close();
});

/** Opens `/stream/live` for `seed`: the response (a 200 stays open until the test ends). */
async function live(key: string, seed: number, base = http.url): Promise<Response> {
  const ctl = new AbortController();
  const res = await fetch(`${base}/stream/live?symbol=BTC&seed=${seed}`, {
    headers: { 'x-api-key': key, accept: 'text/event-stream' },
    signal: ctl.signal,
  });
  if (res.status === 200) open.push(ctl);
  return res;
}

it('caps streams per key, sessions per account and per process; refusals leave nothing', async () => {
  const pro = await accounts.key('pro');
  // Distinct sessions of one account: LIVE_SESSIONS_PER_ACCOUNT, then a new seed is refused.
  for (let seed = 1; seed <= LIVE_SESSIONS_PER_ACCOUNT; seed++)
    expect((await live(pro.key, seed)).status).toBe(200);
  await expectError(await live(pro.key, 1_000), 429, 'subscription_limit');
  expect(http.sessions.size).toBe(LIVE_SESSIONS_PER_ACCOUNT);

  // The key's cap: more streams on a session it holds, up to Pro's 10, then refused.
  const cap = TIER_LIMITS.pro.concurrentStreams;
  for (let i = LIVE_SESSIONS_PER_ACCOUNT; i < cap; i++) expect((await live(pro.key, 1)).status).toBe(200);
  await expectError(await live(pro.key, 1), 429, 'subscription_limit');

  // A Basic key (no live-data stream transport) may hold BASIC_SIMULATION_STREAMS.
  const basic = await accounts.key('basic');
  for (let i = 0; i < BASIC_SIMULATION_STREAMS; i++) expect((await live(basic.key, 1)).status).toBe(200);
  await expectError(await live(basic.key, 1), 429, 'subscription_limit');

  // The process: PER_PROCESS sessions, then a new one is refused 503 and not kept.
  const other = await accounts.key('pro');
  for (let seed = 2_000; http.sessions.size < PER_PROCESS; seed++)
    expect((await live(other.key, seed)).status).toBe(200);
  await expectError(await live(other.key, 3_000), 503, 'overload');
  expect(http.sessions.size).toBe(PER_PROCESS);
  expect(http.sessions.producedSessions).toBe(PER_PROCESS);

  // Closing streams gives the slots back: the Pro key opens a stream again.
  for (const c of open.splice(0)) c.abort();
  await eventually(
    async () => {
      const res = await live(pro.key, 1);
      await res.body?.cancel();
      return res.status === 200;
    },
    20_000,
    'a stream after the others closed',
    250,
  );
});

it('does not keep a session whose start failed', async () => {
  const { key } = await accounts.key('pro');
  await nats.jsm.streams.delete(STREAMS.SIM);
  await expectError(await live(key, 5_000, second.url), 503, 'feed_unavailable');
  expect(second.sessions.size).toBe(0);
  await setupStreams(nats, config);
  const res = await live(key, 5_000, second.url);
  expect(res.status).toBe(200);
  expect(second.sessions.size).toBe(1);
});
