/** The JSON-RPC envelope of POST /mcp, without a server: decoding, call checks, response shapes. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../contracts/errors.ts';
import { MAX_JSONRPC_BATCH } from '../../contracts/limits.ts';
import {
  decodeBody,
  errorResponse,
  readCall,
  responseStyle,
  resultResponse,
} from '../../gateways/core/jsonrpc-envelope.ts';

const codeOf = (text: string) => {
  const d = decodeBody(text);
  return d.ok ? null : d.error.row.jsonRpc;
};

describe('decodeBody', () => {
  it('answers malformed or empty JSON with -32700', () => {
    expect(codeOf('{"jsonrpc":')).toBe(-32700);
    expect(codeOf('')).toBe(-32700);
    expect(codeOf('   ')).toBe(-32700);
  });

  it('answers an empty batch with -32600 and a batch over the limit with -32006', () => {
    expect(codeOf('[]')).toBe(-32600);
    const calls = (n: number) =>
      JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'ping' })));
    expect(codeOf(calls(MAX_JSONRPC_BATCH + 1))).toBe(-32006);
    expect(decodeBody(calls(MAX_JSONRPC_BATCH))).toMatchObject({ ok: true, batch: true });
  });

  it('reads a single value as a one-item body', () => {
    expect(decodeBody('42')).toEqual({ ok: true, batch: false, items: [42] });
  });
});

describe('readCall', () => {
  const invalid = (item: unknown) => {
    const r = readCall(item);
    return 'error' in r ? { id: r.id, code: r.error.row.jsonRpc } : null;
  };

  it('refuses what is not a JSON-RPC 2.0 request with -32600, echoing a readable id', () => {
    expect(invalid(42)).toEqual({ id: null, code: -32600 });
    expect(invalid([1])).toEqual({ id: null, code: -32600 });
    expect(invalid({ jsonrpc: '1.0', id: 5, method: 'ping' })).toEqual({ id: 5, code: -32600 });
    expect(invalid({ jsonrpc: '2.0', id: 5 })).toEqual({ id: 5, code: -32600 });
    expect(invalid({ jsonrpc: '2.0', id: {}, method: 'ping' })).toEqual({ id: null, code: -32600 });
    expect(invalid({ jsonrpc: '2.0', id: 1, method: 'ping', params: 3 })).toEqual({ id: 1, code: -32600 });
    expect(invalid({ jsonrpc: '2.0', id: 1, method: 'ping', params: null })).toEqual({ id: 1, code: -32600 });
  });

  it('keeps ids unchanged (0, "" and null included) and tells notifications apart', () => {
    for (const id of [0, '', 'abc', -7, 1.5, null])
      expect(readCall({ jsonrpc: '2.0', id, method: 'ping' })).toEqual({
        id,
        method: 'ping',
        params: undefined,
        notification: false,
      });
    expect(readCall({ jsonrpc: '2.0', method: 'notifications/initialized' })).toMatchObject({
      notification: true,
    });
  });
});

describe('responses', () => {
  it('carry "error": null for plain callers and omit it for Streamable HTTP clients', () => {
    expect(resultResponse(0, {}, 'plain')).toEqual({ jsonrpc: '2.0', id: 0, result: {}, error: null });
    expect(Object.keys(resultResponse(0, {}, 'streamable'))).toEqual(['jsonrpc', 'id', 'result']);
  });

  it('never carry a result on an error, and take the code from the catalogue', () => {
    const err = new ApiError('invalid_params', 'bad name', { field: 'params.name', reason: 'required' });
    const res = errorResponse('x', err, 'req_1');
    expect(res).toEqual({
      jsonrpc: '2.0',
      id: 'x',
      error: {
        code: -32602,
        message: 'bad name',
        data: { error: 'invalid_params', request_id: 'req_1', field: 'params.name', reason: 'required' },
      },
    });
    expect('result' in res).toBe(false);
  });

  it('never show internals of a server error', () => {
    const err = new ApiError('internal', 'db password is hunter2', { secret: 1 });
    expect(errorResponse(1, err, 'req_1').error).toEqual({
      code: -32603,
      message: 'Internal server error.',
      data: { error: 'internal', request_id: 'req_1' },
    });
  });

  it('take the style from Accept', () => {
    expect(responseStyle('application/json, text/event-stream')).toBe('streamable');
    expect(responseStyle('application/json')).toBe('plain');
    expect(responseStyle(undefined)).toBe('plain');
  });
});
