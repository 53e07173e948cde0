/**
 * runCall's params cache (gateways/jsonrpc/methods/index.ts): params that passed their contract
 * are not validated again when the same method is called with the same flat scalars; params that
 * fail are validated (and refused) every time; params with objects, or whose parsed form holds an
 * object, are never kept; two different params never share an entry (a separator inside a string).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApiError } from '../../contracts/errors.ts';
import type { CallContext } from '../../gateways/jsonrpc/context.ts';
import { type MethodTable, runCall } from '../../gateways/jsonrpc/methods/index.ts';

function table() {
  const parses = { flat: 0, nested: 0 };
  const seen: unknown[] = [];
  const counted = <S extends z.ZodType>(which: keyof typeof parses, schema: S) =>
    z.preprocess((v) => {
      parses[which]++;
      return v;
    }, schema);
  const methods: MethodTable = new Map([
    [
      'flat',
      {
        params: {
          names: ['a', 'b'],
          schema: counted('flat', z.object({ a: z.string(), b: z.number().optional() }).strict()),
        },
        run: ((p: unknown) => {
          seen.push(p);
          return JSON.stringify(p);
        }) as never,
      },
    ],
    [
      'nested',
      {
        params: {
          names: ['a'],
          schema: counted('nested', z.object({ a: z.string().transform((s) => [s]) }).strict()),
        },
        run: ((p: unknown) => JSON.stringify(p)) as never,
      },
    ],
  ]);
  return { methods, parses, seen };
}

const ctx = {} as CallContext;
const call = (method: string, params: unknown) => ({ id: 1, method, params, notification: false });

describe('json-rpc params cache', () => {
  it('validates the same flat params once, and gives the method the same parsed value', () => {
    const { methods, parses, seen } = table();
    // A name no other test uses: the cache is the process's.
    expect(runCall(methods, call('flat', ['cache-once', 2]), ctx)).toBe('{"a":"cache-once","b":2}');
    expect(runCall(methods, call('flat', ['cache-once', 2]), ctx)).toBe('{"a":"cache-once","b":2}');
    expect(parses.flat).toBe(1);
    expect(Object.isFrozen(seen[1])).toBe(true);
    // Another value, another entry.
    runCall(methods, call('flat', ['cache-once', 3]), ctx);
    expect(parses.flat).toBe(2);
  });

  it('refuses bad params every time (never cached)', () => {
    const { methods, parses } = table();
    for (let i = 0; i < 2; i++)
      expect(() => runCall(methods, call('flat', ['bad-params', 'not a number']), ctx)).toThrow(ApiError);
    expect(parses.flat).toBe(2);
  });

  it('keys strings with the separator apart from the params they would spell', () => {
    const { methods, parses, seen } = table();
    runCall(methods, call('flat', ['sep\u0000v2']), ctx);
    runCall(methods, call('flat', ['sep', 2]), ctx);
    runCall(methods, call('flat', ['sep\u0000v2']), ctx);
    expect(parses.flat).toBe(3);
    expect(seen.map((p) => JSON.stringify(p))).toEqual([
      '{"a":"sep\\u0000v2"}',
      '{"a":"sep","b":2}',
      '{"a":"sep\\u0000v2"}',
    ]);
  });

  it('keys one string apart from the empty string, no params and longer params', () => {
    const { methods, parses, seen } = table();
    const sent = [['one-key'], [''], ['one-key', 1], ['one-key'], [''], ['one-key', 1]];
    for (const params of sent) runCall(methods, call('flat', params), ctx);
    expect(parses.flat).toBe(3);
    expect(seen.map((p) => JSON.stringify(p))).toEqual([
      '{"a":"one-key"}',
      '{"a":""}',
      '{"a":"one-key","b":1}',
      '{"a":"one-key"}',
      '{"a":""}',
      '{"a":"one-key","b":1}',
    ]);
    // No params at all fail the contract (a is required) every time, whatever [''] left behind.
    for (let i = 0; i < 2; i++) expect(() => runCall(methods, call('flat', []), ctx)).toThrow(ApiError);
  });

  it('never keeps params sent as an object, or whose parsed form holds an object', () => {
    const { methods, parses } = table();
    for (let i = 0; i < 2; i++) runCall(methods, call('flat', { a: 'as-object' }), ctx);
    expect(parses.flat).toBe(2);
    for (let i = 0; i < 2; i++) runCall(methods, call('nested', ['nested']), ctx);
    expect(parses.nested).toBe(2);
  });
});
