/**
 * POST /mcp as a plain JSON-RPC 2.0 caller sees it (fetch, real guard, real keys): the spec's
 * literal response shape, every envelope error code, ids, batches, notifications and HTTP
 * hygiene (405 on GET/DELETE, 413, 401).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { SERVER_INFO } from '../../contracts/mcp-tools.ts';
import { createHttpApp } from '../../gateways/core/http-hygiene.ts';
import { registerMcpRoutes } from '../../gateways/http/mcp/routes.ts';
import { installKeyAuth } from '../../gateways/http/require-key.ts';
import type { Stoppable } from '../../platform/lifecycle.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let guardPart: Stoppable;
let app: FastifyInstance;
let base = '';
let key = '';

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  const edge = await startEdgeGuard(nats, config, createLogger('silent'));
  guardPart = edge.part;
  app = createHttpApp();
  registerMcpRoutes(app, {
    requireKey: installKeyAuth(app, edge.guard),
    generation: {
      generate: async () => {
        throw new Error('not used here');
      },
    },
    health: { health: async () => ({ status: 'ok', version: '0.4.7', nats: 'connected' }) },
    baseUrl: () => base,
  });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  key = (await accounts.key('quant')).key;
});

afterAll(async () => {
  await app?.close();
  await guardPart?.stop();
  await natsBase?.close();
});

const rpc = (body: unknown, accept = 'application/json') =>
  fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, 'x-api-key': key },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const call = (method: string, params?: unknown, id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });
const json = async (res: Response) => {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res.json();
};
/** An error response: exactly jsonrpc, id, error (never result), with the code and a request id. */
const expectRpcError = (body: Record<string, unknown>, id: unknown, code: number) => {
  expect(Object.keys(body).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
  expect((body.error as { data: { request_id: string } }).data.request_id).toMatch(/^req_/);
};

describe('plain JSON-RPC callers', () => {
  it('get the spec literal shape, "error": null included', async () => {
    const body = await json(await rpc(call('initialize', { clientInfo: { name: 'curl', version: '8' } })));
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: SERVER_INFO },
      error: null,
    });
  });

  it('get no error key when they speak Streamable HTTP (Accept includes text/event-stream)', async () => {
    const body = await json(await rpc(call('ping'), 'application/json, text/event-stream'));
    expect(body).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
  });

  it('get exactly {} from ping, and the tool list from tools/list', async () => {
    expect((await json(await rpc(call('ping')))).result).toEqual({});
    const list = await json(await rpc(call('tools/list')));
    expect(list.result.tools.map((t: { name: string }) => t.name)).toContain('generate_dataset');
  });

  it('get their id back unchanged, 0 and "" included', async () => {
    for (const id of [0, '', 'a-b', -3, 2.5, null, 9007199254740991]) {
      expect((await json(await rpc(call('ping', undefined, id)))).id).toEqual(id);
    }
  });
});

describe('envelope errors', () => {
  it('malformed JSON is -32700 with id null', async () => {
    expectRpcError(await json(await rpc('{"jsonrpc":"2.0","id":1,')), null, -32700);
    expectRpcError(await json(await rpc('')), null, -32700);
  });

  it('not a request object, or the wrong jsonrpc, is -32600', async () => {
    expectRpcError(await json(await rpc('42')), null, -32600);
    expectRpcError(await json(await rpc({ jsonrpc: '1.0', id: 7, method: 'ping' })), 7, -32600);
    expectRpcError(await json(await rpc({ jsonrpc: '2.0', id: 8 })), 8, -32600);
  });

  it('an empty batch is -32600; a batch over 100 calls is -32006', async () => {
    expectRpcError(await json(await rpc([])), null, -32600);
    const batch = Array.from({ length: 101 }, (_, i) => call('ping', undefined, i));
    expectRpcError(await json(await rpc(batch)), null, -32006);
  });

  it('an unknown method is -32601', async () => {
    expectRpcError(await json(await rpc(call('resources/list', {}, 0))), 0, -32601);
    expectRpcError(await json(await rpc(call('toString', {}, 0))), 0, -32601);
  });

  it('bad params are -32602', async () => {
    expectRpcError(await json(await rpc(call('tools/call', {}))), 1, -32602);
    expectRpcError(
      await json(await rpc(call('tools/call', { name: 'get_health', arguments: [] }))),
      1,
      -32602,
    );
    expectRpcError(await json(await rpc(call('tools/call', { name: 'nope' }))), 1, -32602);
    expectRpcError(await json(await rpc(call('initialize', {}))), 1, -32602);
  });
});

describe('batches and notifications', () => {
  it('answer a batch of 100 in order, each call on its own', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => call(i % 2 ? 'ping' : 'nope', undefined, i));
    const body = await json(await rpc(batch));
    expect(body).toHaveLength(100);
    body.forEach((r: { id: number; result?: unknown; error?: { code: number } | null }, i: number) => {
      expect(r.id).toBe(i);
      if (i % 2) expect(r).toEqual({ jsonrpc: '2.0', id: i, result: {}, error: null });
      else expect(r.error?.code).toBe(-32601);
    });
  });

  it('leave notifications unanswered: 202 with no body, or out of the batch', async () => {
    const res = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
    const only = await rpc([
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 'x' },
    ]);
    expect(only.status).toBe(202);
    const mixed = await json(
      await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }, call('ping', undefined, 'p')]),
    );
    expect(mixed).toEqual([{ jsonrpc: '2.0', id: 'p', result: {}, error: null }]);
  });
});

describe('HTTP around the envelope', () => {
  it('GET and DELETE /mcp are 405 with the error body', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { 'x-api-key': key } });
      expect(res.headers.get('allow')).toContain('POST');
      await expectError(res, 405, 'method_not_allowed');
    }
  });

  it('a missing or unknown key is 401 with the error body and no Bearer challenge', async () => {
    for (const headers of [{}, { 'x-api-key': 'mdk_live_nope' }] as Record<string, string>[]) {
      const res = await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(call('ping')) });
      expect(res.headers.get('www-authenticate')).toBeNull();
      await expectError(res, 401, 'invalid_key');
    }
  });

  it('a body over 1 MB is 413', async () => {
    await expectError(await rpc(`"${'x'.repeat(1_100_000)}"`), 413, 'payload_too_large');
  });
});
