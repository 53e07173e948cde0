/**
 * What a batch costs and how it ends, on the JSON-RPC edge with the real guard:
 * - every call takes a token: on a frozen clock (no refill) a Basic key has exactly its burst of
 *   25, so a batch of 30 runs 25 calls and answers 5 with -32000 carrying `retry_after`, and the
 *   next request, with no call admitted, is HTTP 429 with a JSON-RPC body and Retry-After;
 * - a key revoked while its batch is in flight: the calls still running end with -32001 at once,
 *   calls already finished keep their results, and the next request is 401. (Each call scans the
 *   12,000 stored trades, none in its range, so the batch is slow but its answer holds no trade:
 *   one request answers at most 20,000 events, contracts/transport-limits.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import type { Guard } from '../../gateways/core/guard.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { post, type RpcAnswer, rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const FROZEN_MS = Date.UTC(2030, 0, 1);
const BASIC_BURST = 25;
const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
});

afterAll(async () => {
  await base?.close();
});

const calls = (n: number) => Array.from({ length: n }, (_, i) => rpc('eth_chainId', [], i));

describe('rate limits count every call of a batch', () => {
  let edge: TestJsonRpc;
  beforeAll(async () => {
    edge = await startTestJsonRpc(nats, config, { guard: 'keys', clock: () => FROZEN_MS });
  });
  afterAll(async () => edge?.close());

  it('run the calls the key has tokens for and refuse the rest with -32000 and retry_after, in order', async () => {
    const { key } = await accounts.key('basic');
    const res = await post(edge.url, calls(BASIC_BURST + 5), { 'x-api-key': key });
    expect(res.status).toBe(200);
    const answers = res.json as RpcAnswer[];
    expect(answers.map((a) => a.id)).toEqual([...Array(BASIC_BURST + 5).keys()]);
    expect(answers.filter((a) => 'result' in a).map((a) => a.id)).toEqual([...Array(BASIC_BURST).keys()]);
    for (const a of answers.slice(BASIC_BURST)) {
      expect(a.error).toMatchObject({ code: -32000, data: { error: 'rate_limited' } });
      expect(a.error?.data.retry_after).toBeGreaterThanOrEqual(1);
    }
  });

  it('answer HTTP 429 with Retry-After and a JSON-RPC body when no call is admitted', async () => {
    const { key } = await accounts.key('basic');
    await post(edge.url, calls(BASIC_BURST), { 'x-api-key': key });
    const res = await post(edge.url, calls(3), { 'x-api-key': key });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    const body = res.json as RpcAnswer;
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { error: 'rate_limited', retry_after: retryAfter } },
    });
    expect(body.error?.data.request_id).toBe(res.headers.get('x-request-id'));
  });
});

describe('a key revoked while its batch is in flight', () => {
  const COIN = 'SLOW';
  const TRADES = 12_000;
  let edge: TestJsonRpc;
  let admitted: (() => void) | null = null;

  beforeAll(async () => {
    const edgeGuard = await startEdgeGuard(nats, config, createLogger('silent'));
    // The test's own view of the real guard: told when the request has been admitted.
    const guard: Guard = {
      async admit(req) {
        const principal = await edgeGuard.guard.admit(req);
        admitted?.();
        return principal;
      },
    };
    edge = await startTestJsonRpc(nats, config, { guard });
    const start = Date.now();
    for (let i = 0; i < TRADES; i += 2_000)
      await publishNow(
        nats.js,
        Array.from({ length: 2_000 }, (_, k) => ({
          ...trade(COIN, i + k),
          // Stored now, but traded before the range the calls ask for.
          timestamp_ms: start - 3_000_000,
          capture_time_ms: start,
        })),
      );
    return async () => {
      await edge?.close();
      await edgeGuard.part.stop();
    };
  }, 120_000);

  it('ends the calls still running with -32001, keeps finished ones, and refuses the next request', async () => {
    const owner = await accounts.key('quant');
    const now = Date.now();
    // One quick call, then 99 that each scan the 12,000 trades stored in their window.
    const body = [
      rpc('eth_chainId', [], 0),
      ...Array.from({ length: 99 }, (_, i) => rpc('md_trades', [COIN, now - 600_000, now, 10_000], i + 1)),
    ];
    const isAdmitted = new Promise<void>((resolve) => {
      admitted = resolve;
    });
    const pending = post(edge.url, body, { 'x-api-key': owner.key });
    await isAdmitted;
    await accounts.service.revokeKey(owner.accountId, owner.keyId);
    const res = await pending;
    expect(res.status).toBe(200);
    const answers = res.json as RpcAnswer[];
    expect(answers.map((a) => a.id)).toEqual(body.map((c) => c.id));
    expect(answers[0]?.result).toBeTruthy();
    const revoked = answers.filter((a) => a.error);
    expect(revoked.length).toBeGreaterThan(0);
    for (const a of revoked) expect(a.error).toMatchObject({ code: -32001, data: { error: 'key_revoked' } });
    for (const a of answers.filter((x) => x.result !== undefined && x.id !== 0))
      expect(a.result).toMatchObject({ trades: [], truncated: false });

    const next = await post(edge.url, rpc('eth_chainId'), { 'x-api-key': owner.key });
    expect(next.status).toBe(401);
    expect(next.json).toMatchObject({ error: { code: -32001, data: { error: 'key_revoked' } } });
  });
});
