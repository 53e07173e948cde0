/**
 * Every call of a POST /mcp batch takes a rate-limit token of the key, not one per HTTP request.
 * On a frozen clock (no refill) a Basic key has exactly its burst of 25 tokens: a batch of 30
 * runs 25 calls and answers the last 5 with -32000 (`retry_after` in data) without running them,
 * and the key's next request is a 429 with Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { type GuardedHttp, startGuardedHttp } from '../support/guarded-http.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const FROZEN_MS = Date.UTC(2030, 0, 1);
const BASIC_BURST = 25;

let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: GuardedHttp;

beforeAll(async () => {
  const config = testConfig();
  base = await startBase(config);
  ({ nats, accounts } = base);
  http = await startGuardedHttp(nats, config, accounts, { clock: () => FROZEN_MS });
});

afterAll(async () => {
  await http?.close();
  await base?.close();
});

const post = (key: string, body: unknown) =>
  fetch(`${http.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });

const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' }));

type Answer = { id: number; result?: unknown; error?: { code: number; data: Record<string, unknown> } };

describe('POST /mcp batches and the rate limit', () => {
  it('take one token per call: calls past the key’s tokens are refused with -32000, not run', async () => {
    const { key } = await accounts.key('basic');
    const res = await post(key, pings(BASIC_BURST + 5));
    expect(res.status).toBe(200);
    const answers = (await res.json()) as Answer[];
    expect(answers.map((a) => a.id)).toEqual(pings(BASIC_BURST + 5).map((p) => p.id));
    const ran = answers.filter((a) => 'result' in a);
    const refused = answers.filter((a) => a.error);
    expect(ran.map((a) => a.id)).toEqual([...Array(BASIC_BURST).keys()]);
    expect(refused).toHaveLength(5);
    for (const a of refused) {
      expect(a.error?.code).toBe(-32000);
      expect(a.error?.data).toMatchObject({ error: 'rate_limited' });
      expect(a.error?.data.retry_after).toBeGreaterThanOrEqual(1);
    }

    const next = await post(key, { jsonrpc: '2.0', id: 'after', method: 'ping' });
    expect(next.status).toBe(429);
    expect(Number(next.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('count a batch as its calls, so two batches cannot spend more than the burst', async () => {
    const { key } = await accounts.key('basic');
    const first = (await (await post(key, pings(20))).json()) as Answer[];
    const second = (await (await post(key, pings(20))).json()) as Answer[];
    const ran = [...first, ...second].filter((a) => 'result' in a).length;
    expect(ran).toBe(BASIC_BURST);
    expect(second.filter((a) => a.error?.code === -32000)).toHaveLength(40 - BASIC_BURST);
  });
});
