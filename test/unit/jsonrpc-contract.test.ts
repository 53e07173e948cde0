/** The JSON-RPC edge's contract, without a server: its code table against the catalogue, and params. */
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, JSON_RPC_CODES } from '../../contracts/errors.ts';
import { JSONRPC_EDGE_CODES, JSONRPC_METHODS, paramsObject } from '../../contracts/jsonrpc.ts';

describe('the code table of the JSON-RPC edge', () => {
  it('has every code of the spec, each answered only by catalogue rows of that code', () => {
    expect(Object.keys(JSONRPC_EDGE_CODES).map(Number).sort()).toEqual(
      JSON_RPC_CODES.map((c) => c.code).sort(),
    );
    for (const [code, { rows }] of Object.entries(JSONRPC_EDGE_CODES)) {
      expect(rows.length, code).toBeGreaterThan(0);
      for (const row of rows) expect(ERROR_CATALOGUE[row].jsonRpc, `${code} ${row}`).toBe(Number(code));
    }
  });
});

describe('paramsObject', () => {
  const mid = JSONRPC_METHODS.md_midPrice;

  it('names positional params in the spec order, and takes an object as it is', () => {
    expect(paramsObject(mid, ['BTC', 'binance'])).toEqual({ coin: 'BTC', source: 'binance' });
    expect(paramsObject(mid, { coin: 'BTC' })).toEqual({ coin: 'BTC' });
    expect(paramsObject(mid, undefined)).toEqual({});
  });

  it('leaves out nulls (an optional param skipped) and names a param too many so that it is refused', () => {
    expect(paramsObject(JSONRPC_METHODS.md_l2Book, ['BTC', null, 'binance'])).toEqual({
      coin: 'BTC',
      source: 'binance',
    });
    const extra = paramsObject(mid, ['BTC', 'binance', 3]);
    expect(extra).toEqual({ coin: 'BTC', source: 'binance', param_3: 3 });
    expect(mid.schema.safeParse(extra).success).toBe(false);
  });
});
