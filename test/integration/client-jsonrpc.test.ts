/**
 * The TypeScript JSON-RPC client against the real JSON-RPC edge with the real key guard: calls made
 * together go out as one batch (≤ 100 per request), answers reach their callers in any order, and
 * failures are JsonRpcErrors with the catalogue's JSON-RPC code, error code and request id, per
 * call or for every call of a refused request.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JsonRpcClient, JsonRpcError, JsonRpcErrorCode } from '../../clients/typescript/src/index.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { eventually } from '../support/eventually.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { book, trade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let stack: TestStack;
let edge: TestJsonRpc;
let key: string;

beforeAll(async () => {
  stack = await startStack();
  edge = await startTestJsonRpc(stack.nats, stack.config, { guard: 'keys' });
  key = (await stack.accounts.key('quant')).key;
  const events = [trade('BTC', 1), book('BTC', 2), trade('ETH', 3), book('ETH', 4)];
  await publishEvents(
    stack.nats.js,
    events.map((event, i) => ({ event, id: `rpc.${i}`, ingestUs: nowUs() })),
    createLogger('silent'),
  );
});

afterAll(async () => {
  await edge?.close();
  await stack?.close();
});

it('exposes the catalogue’s JSON-RPC codes as an enum', () => {
  expect(JsonRpcErrorCode).toMatchObject({
    ParseError: -32700,
    InvalidParams: -32602,
    RateLimitExceeded: -32000,
    AuthenticationFailed: -32001,
    CoinNotFound: -32003,
    BatchTooLarge: -32006,
    SnapshotTooLarge: -32007,
    MaintenanceMode: -32010,
  });
});

it('batches calls made together and answers each caller, with per-call typed errors', async () => {
  const client = new JsonRpcClient({ url: edge.url, key });
  const last_seq = await lastSeq(stack.nats);
  await eventually(async () => (await client.blockNumber()) === last_seq, 10_000);
  const before = client.requests;
  const [height, chain, mid, missing, tooDeep] = await Promise.allSettled([
    client.blockNumber(),
    client.call<string>('eth_chainId'),
    client.call<Record<string, unknown>>('md_midPrice', { coin: 'ETH' }),
    client.call('md_midPrice', { coin: 'NOPE' }),
    client.call('md_l2Book', { coin: 'BTC', depth: 5_000 }),
  ]);
  expect(client.requests - before).toBe(1);
  expect(height).toEqual({ status: 'fulfilled', value: last_seq });
  expect(chain).toMatchObject({ status: 'fulfilled', value: expect.stringMatching(/^0x[0-9a-f]+$/) });
  expect(mid).toMatchObject({ status: 'fulfilled' });
  const notFound = (missing as PromiseRejectedResult).reason;
  expect(notFound).toBeInstanceOf(JsonRpcError);
  expect(notFound).toMatchObject({
    rpcCode: JsonRpcErrorCode.CoinNotFound,
    code: 'coin_not_found',
    status: 200,
    requestId: expect.stringMatching(/^req_/),
  });
  expect((tooDeep as PromiseRejectedResult).reason).toMatchObject({
    rpcCode: JsonRpcErrorCode.SnapshotTooLarge,
    code: 'snapshot_too_large',
  });
});

it('splits more than 100 simultaneous calls into batches of at most 100', async () => {
  const client = new JsonRpcClient({ url: edge.url, key });
  const answers = await Promise.all(Array.from({ length: 250 }, () => client.call<string>('net_version')));
  expect(client.requests).toBe(3);
  expect(new Set(answers).size).toBe(1);
});

it('fails every call of a refused request with the whole request’s status and code', async () => {
  const client = new JsonRpcClient({
    url: edge.url,
    key: `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`,
  });
  const results = await Promise.allSettled([client.call('eth_chainId'), client.call('md_coins')]);
  for (const r of results) {
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toMatchObject({
      rpcCode: JsonRpcErrorCode.AuthenticationFailed,
      code: 'invalid_key',
      status: 401,
      requestId: expect.stringMatching(/^req_/),
    });
  }
});
