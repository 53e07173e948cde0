/**
 * The JSON-RPC edge's envelope and its EVM-style methods, against a real nats-server and the real
 * guard: one call or a batch (≤ 100, answers in request order, results and errors mixed), an empty
 * batch, notifications, GET, oversized bodies, params as an array or an object, and failures of the
 * whole request answered with their real HTTP status and a JSON-RPC error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSONRPC_CLIENT_VERSION } from '../../contracts/jsonrpc.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { call, post, type RpcAnswer, rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig({ JSONRPC_CHAIN_ID: '4242' });
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestJsonRpc;
let key: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  edge = await startTestJsonRpc(nats, config, { guard: 'keys' });
  key = (await accounts.key('quant')).key;
});

afterAll(async () => {
  await edge?.close();
  await base?.close();
});

const auth = () => ({ 'x-api-key': key });

describe('EVM-style methods', () => {
  it('answer eth_chainId, net_version and web3_clientVersion from the configuration', async () => {
    expect((await call(edge.url, 'eth_chainId', [], auth())).result).toBe('0x1092');
    expect((await call(edge.url, 'net_version', [], auth())).result).toBe('4242');
    expect((await call(edge.url, 'web3_clientVersion', [], auth())).result).toBe(JSONRPC_CLIENT_VERSION);
    expect(JSONRPC_CLIENT_VERSION).toMatch(/\/0\.4\.7$/);
  });

  it('answer eth_blockNumber with the MD stream’s last sequence as a hex quantity', async () => {
    await publishNow(
      nats.js,
      [0, 1, 2].map((i) => trade('BTC', i)),
    );
    const last = await lastSeq(nats);
    expect(last).toBeGreaterThanOrEqual(3);
    await eventually(
      async () => (await call(edge.url, 'eth_blockNumber', [], auth())).result === `0x${last.toString(16)}`,
    );
  });

  it('refuse every other eth_* method with -32601', async () => {
    for (const method of ['eth_sendRawTransaction', 'eth_getBalance', 'eth_call']) {
      const answer = await call(edge.url, method, [], auth());
      expect(answer.error?.code, method).toBe(-32601);
      expect('result' in answer).toBe(false);
    }
  });
});

describe('the envelope', () => {
  it('answers a batch of 100 in request order, results and errors mixed', async () => {
    const body = Array.from({ length: 100 }, (_, i) =>
      i % 3 === 0
        ? rpc('eth_chainId', [], i)
        : i % 3 === 1
          ? rpc('no_such_method', [], i)
          : rpc('net_version', {}, i),
    );
    const res = await post(edge.url, body, auth());
    expect(res.status).toBe(200);
    const answers = res.json as RpcAnswer[];
    expect(answers.map((a) => a.id)).toEqual(body.map((c) => c.id));
    answers.forEach((a, i) => {
      if (i % 3 === 1) expect(a.error?.code).toBe(-32601);
      else expect(a.result).toBe(i % 3 === 0 ? '0x1092' : '4242');
    });
  });

  it('refuses a batch of 101 with one -32006 error (HTTP 200, id null)', async () => {
    const res = await post(
      edge.url,
      Array.from({ length: 101 }, (_, i) => rpc('eth_chainId', [], i)),
      auth(),
    );
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32006 } });
  });

  it('answers an empty batch with one -32600 and malformed JSON with -32700', async () => {
    expect((await post(edge.url, '[]', auth())).json).toMatchObject({ id: null, error: { code: -32600 } });
    const bad = await post(edge.url, '{"jsonrpc":', auth());
    expect(bad.status).toBe(200);
    expect(bad.json).toMatchObject({ id: null, error: { code: -32700, data: { error: 'parse_error' } } });
  });

  it('answers invalid items of a batch with -32600 and runs the others', async () => {
    const res = await post(
      edge.url,
      [rpc('eth_chainId', [], 'a'), { jsonrpc: '1.0', id: 'b', method: 'x' }, 7],
      auth(),
    );
    expect(res.json).toEqual([
      { jsonrpc: '2.0', id: 'a', result: '0x1092' },
      { jsonrpc: '2.0', id: 'b', error: expect.objectContaining({ code: -32600 }) },
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
    ]);
  });

  it('answers a body of notifications only with 204 and no body', async () => {
    const note = { jsonrpc: '2.0', method: 'eth_chainId' };
    const one = await post(edge.url, note, auth());
    expect([one.status, one.text]).toEqual([204, '']);
    const many = await post(edge.url, [note, note], auth());
    expect([many.status, many.text]).toEqual([204, '']);
    const mixed = await post(edge.url, [note, rpc('eth_chainId', [], 9)], auth());
    expect(mixed.json).toEqual([{ jsonrpc: '2.0', id: 9, result: '0x1092' }]);
  });

  it('takes params as an array or an object, and refuses extra or mistyped params with -32602', async () => {
    expect((await call(edge.url, 'eth_chainId', {}, auth())).result).toBe('0x1092');
    expect((await call(edge.url, 'eth_chainId', [1], auth())).error?.code).toBe(-32602);
    expect((await call(edge.url, 'md_midPrice', [42], auth())).error?.code).toBe(-32602);
    expect((await call(edge.url, 'md_midPrice', {}, auth())).error).toMatchObject({
      code: -32602,
      data: { error: 'invalid_params', field: 'coin' },
    });
  });

  it('echoes ids unchanged: 0, "" and null', async () => {
    const res = await post(
      edge.url,
      [rpc('eth_chainId', [], 0), rpc('eth_chainId', [], ''), rpc('eth_chainId', [], null)],
      auth(),
    );
    expect((res.json as RpcAnswer[]).map((a) => a.id)).toEqual([0, '', null]);
  });

  it('answers GET with 405 and Allow: POST', async () => {
    const res = await fetch(`${edge.url}/`, { headers: auth() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { data: { error: 'method_not_allowed' } },
    });
  });

  it('answers a body over 1 MB with 413 and a JSON-RPC error body', async () => {
    const res = await post(edge.url, JSON.stringify(rpc('eth_chainId', ['x'.repeat(1_100_000)])), auth());
    expect(res.status).toBe(413);
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { data: { error: 'payload_too_large' } },
    });
  });

  it('serves /healthz on the same port without a key', async () => {
    const res = await fetch(`${edge.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});

describe('failures of the whole request', () => {
  it('answer a missing or unknown key with 401 and -32001, with a request id and a timestamp', async () => {
    for (const headers of [{}, { 'x-api-key': 'mdp_live_notakey' }] as Record<string, string>[]) {
      const res = await post(edge.url, rpc('eth_chainId'), headers);
      expect(res.status).toBe(401);
      const body = res.json as RpcAnswer;
      expect(body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, data: { error: 'invalid_key' } },
      });
      expect(body.error?.data.request_id).toBe(res.headers.get('x-request-id'));
      expect(Date.parse(String(body.error?.data.timestamp))).not.toBeNaN();
      expect(body.error?.data).not.toHaveProperty('retry_after');
    }
  });

  it('answer the JP edge with 403 and -32002 for a plan without Japan access, and admit one with it', async () => {
    const jp = await startTestJsonRpc(nats, config, { guard: 'keys', region: 'jp' });
    try {
      const res = await post(jp.url, rpc('eth_chainId'), auth());
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({
        id: null,
        error: { code: -32002, data: { error: 'tier_restricted' } },
      });
      const withJapan = (await accounts.key('quant', { jp: true })).key;
      expect((await call(jp.url, 'eth_chainId', [], { 'x-api-key': withJapan })).result).toBe('0x1092');
    } finally {
      await jp.close();
    }
  });
});
