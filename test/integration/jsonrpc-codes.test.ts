/**
 * Every JSON-RPC code of the spec's table, reached on the JSON-RPC edge by a request that should
 * produce it, with the catalogue row `contracts/jsonrpc.ts` names for it (JSONRPC_EDGE_CODES). The
 * edge runs the service's guard (maintenance windows included, scheduled through the real status
 * API); the last cases kill the nats-server. The final test checks that no code was left out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { JSON_RPC_CODES } from '../../contracts/errors.ts';
import { JSONRPC_EDGE_CODES } from '../../contracts/jsonrpc.ts';
import { buildHttpApp, type HttpApp } from '../../gateways/http/app.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import {
  post,
  type RpcAnswer,
  type RpcError,
  rpc,
  startTestJsonRpc,
  type TestJsonRpc,
} from '../support/jsonrpc.ts';
import type { TestNats } from '../support/nats.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const OPERATOR = 'ops@example.com';
const config = testConfig({ JSONRPC_CALL_TIMEOUT_MS: '1000' });
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let http: HttpApp & { url: string; stop(): Promise<void> };
let edge: TestJsonRpc;
let jp: TestJsonRpc;
let frozen: TestJsonRpc;
let quant: string;
let pro: string;
let adminKey: string;

/** Code → the catalogue codes seen with it. */
const reached = new Map<number, Set<string>>();

/** Records the error of an answer (a call's, or the whole request's), checking it against the table. */
function saw(error: RpcError | undefined, code: number): void {
  expect(error?.code, JSON.stringify(error)).toBe(code);
  const row = String(error?.data.error);
  expect(JSONRPC_EDGE_CODES[code as keyof typeof JSONRPC_EDGE_CODES].rows).toContain(row);
  expect(error?.data.request_id).toMatch(/\S/);
  reached.set(code, (reached.get(code) ?? new Set()).add(row));
}

const as = (key: string) => ({ 'x-api-key': key });
/** The error of one call answered with HTTP 200. */
async function callError(url: string, body: unknown, key = quant): Promise<RpcError | undefined> {
  const res = await post(url, body, as(key));
  expect(res.status, res.text).toBe(200);
  return (res.json as RpcAnswer).error;
}
/** The error of a whole request refused with `status`. */
async function requestError(url: string, body: unknown, headers: Record<string, string>, status: number) {
  const res = await post(url, body, headers);
  expect(res.status, res.text).toBe(status);
  expect((res.json as RpcAnswer).id).toBeNull();
  return res;
}

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  const log = createLogger('silent');
  const httpEdge = await startEdgeGuard(nats, config, log);
  const app = await buildHttpApp({
    nats,
    accounts: accounts.service,
    guard: httpEdge.guard,
    config,
    log,
    status: httpEdge.status,
  });
  const url = await app.app.listen({ host: '127.0.0.1', port: 0 });
  const stop = async () => {
    await app.shutdown();
    await httpEdge.part.stop();
  };
  http = { ...app, url, stop };
  edge = await startTestJsonRpc(nats, config, { guard: 'keys' });
  jp = await startTestJsonRpc(nats, config, { guard: 'keys', region: 'jp' });
  frozen = await startTestJsonRpc(nats, config, { guard: 'keys', clock: () => Date.UTC(2030, 0, 1) });
  quant = (await accounts.key('quant')).key;
  pro = (await accounts.key('pro')).key;
  const op = await accounts.service.register({
    email: OPERATOR,
    password: 'Str0ng-Passw0rd!',
    plan: 'pro',
    jp_access: false,
  });
  await accounts.grantOperator(OPERATOR);
  adminKey = (await accounts.service.createKey(op.account_id, { name: 'ops', scopes: ['status:admin'] })).key;
}, 60_000);

afterAll(async () => {
  for (const e of [edge, jp, frozen]) await e?.close().catch(() => {});
  await http?.stop().catch(() => {});
  await base?.close();
});

describe('envelope codes', () => {
  it('-32700 Parse Error: a body that is not JSON', async () =>
    saw(await callError(edge.url, '{"jsonrpc": "2.0",'), -32700));
  it('-32600 Invalid Request: an empty batch', async () => saw(await callError(edge.url, '[]'), -32600));
  it('-32601 Method Not Found: an eth_* method not served', async () =>
    saw(await callError(edge.url, rpc('eth_getBalance', ['0x0', 'latest'])), -32601));
  it('-32602 Invalid Params: a depth below 1', async () =>
    saw(await callError(edge.url, rpc('md_l2Book', ['BTC', 0])), -32602));
  it('-32006 Batch Too Large: 101 calls', async () =>
    saw(
      await callError(
        edge.url,
        Array.from({ length: 101 }, (_, i) => rpc('eth_chainId', [], i)),
      ),
      -32006,
    ));
});

describe('guard codes', () => {
  it('-32001 Authentication Failed: no key (HTTP 401)', async () => {
    const res = await requestError(edge.url, rpc('eth_chainId'), {}, 401);
    saw((res.json as RpcAnswer).error, -32001);
  });

  it('-32002 Tier Restricted: the JP edge for a plan without Japan access (HTTP 403)', async () => {
    const res = await requestError(jp.url, rpc('eth_chainId'), as(quant), 403);
    saw((res.json as RpcAnswer).error, -32002);
  });

  it('-32000 Rate Limit Exceeded: the calls of a batch past the key’s tokens', async () => {
    const basic = (await accounts.key('basic')).key;
    const res = await post(
      frozen.url,
      Array.from({ length: 26 }, (_, i) => rpc('eth_chainId', [], i)),
      as(basic),
    );
    const last = (res.json as RpcAnswer[])[25];
    saw(last?.error, -32000);
    expect(last?.error?.data.retry_after).toBeGreaterThanOrEqual(1);
  });

  it('-32010 Maintenance Mode: a maintenance window over the JSON-RPC edge (HTTP 503, Retry-After)', async () => {
    const now = Date.now();
    const scheduled = await fetch(`${http.url}/api/v1/status/maintenance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...as(adminKey) },
      body: JSON.stringify({
        regions: ['us'],
        transports: ['jsonrpc'],
        starts_at: new Date(now + 500).toISOString(),
        ends_at: new Date(now + 60_000).toISOString(),
        message: 'codes test',
      }),
    });
    expect(scheduled.status).toBe(201);
    const { id } = (await scheduled.json()) as { id: string };
    const res = await eventually(
      async () => {
        const r = await post(edge.url, rpc('eth_chainId'), as(quant));
        return r.status === 503 ? r : null;
      },
      15_000,
      'the edge refusing requests in the window',
    );
    saw((res.json as RpcAnswer).error, -32010);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((res.json as RpcAnswer).error?.data.retry_after).toBe(Number(res.headers.get('retry-after')));
    // The JP edge is not in the window.
    expect(
      (await post(jp.url, rpc('eth_chainId'), as((await accounts.key('basic', { jp: true })).key))).status,
    ).toBe(200);
    const cancelled = await fetch(`${http.url}/api/v1/status/maintenance/${id}`, {
      method: 'DELETE',
      headers: as(adminKey),
    });
    expect(cancelled.status).toBe(204);
    await eventually(
      async () => (await post(edge.url, rpc('eth_chainId'), as(quant))).status === 200,
      15_000,
      'service back',
    );
  });
});

describe('method codes', () => {
  it('-32003 Coin Not Found: a coin the feed does not track', async () =>
    saw(await callError(edge.url, rpc('md_midPrice', ['NOTACOIN'])), -32003));
  it('-32004 Feed Unavailable: a tracked coin with no book yet', async () =>
    saw(await callError(edge.url, rpc('md_midPrice', ['ETH'])), -32004));
  it('-32007 Snapshot Too Large: a depth above 1000', async () =>
    saw(await callError(edge.url, rpc('md_l2Book', ['BTC', 1001])), -32007));
  it('-32008 Invalid Time Range: an end before the start', async () =>
    saw(await callError(edge.url, rpc('md_trades', ['BTC', 2_000, 1_000])), -32008));
  it('-32005 Subscription Limit: one filter more than the tier allows', async () => {
    const basic = (await accounts.key('basic')).key;
    for (let i = 0; i < 10; i++)
      expect((await post(edge.url, rpc('md_newFilter', [{}]), as(basic))).status).toBe(200);
    saw(await callError(edge.url, rpc('md_newFilter', [{}]), basic), -32005);
  });
});

describe('with the nats-server killed', () => {
  let filterId: string;
  beforeAll(async () => {
    filterId = ((await (await post(edge.url, rpc('md_newFilter', [{}]), as(quant))).json) as RpcAnswer)
      .result as string;
    expect((await post(edge.url, rpc('eth_chainId'), as(pro))).status).toBe(200);
    await server.kill('SIGKILL');
  });

  it('-32004 Feed Unavailable: the latest-state view while NATS is unreachable', async () =>
    saw(await callError(edge.url, rpc('md_midPrice', ['BTC'])), -32004));

  it('-32009 Upstream Timeout: a filter poll waiting on KV past the call deadline', async () =>
    saw(await callError(edge.url, rpc('md_getFilterChanges', [filterId])), -32009));

  it('-32603 Internal Error: the rate limiter unreachable for a Pro key (HTTP 503)', async () => {
    const res = await eventually(
      async () => {
        const r = await post(edge.url, rpc('eth_chainId'), as(pro));
        return r.status === 503 ? r : null;
      },
      30_000,
      'the Pro key refused while its limiter is unreachable',
      100,
    );
    saw((res.json as RpcAnswer).error, -32603);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });
});

it('reached every JSON-RPC code of the spec', () => {
  expect([...reached.keys()].sort()).toEqual(JSON_RPC_CODES.map((c) => c.code).sort());
});
