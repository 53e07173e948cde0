/**
 * Funding simulation and venue details over HTTP and MCP on the real app: the worked example,
 * determinism, errors (unknown exchange 422 / unknown venue 404) and the tool = legacy route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../support/http.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let key: string;

beforeAll(async () => {
  stack = await startStack();
  key = (await stack.accounts.key('pro', { scopes: ['mcp'] })).key;
});

afterAll(async () => {
  await stack?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${stack.http.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify(body),
  });
const rpc = async (name: string, args: unknown) => {
  const res = await post('/mcp', {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const body = await res.json();
  return { isError: body.result.isError as boolean, value: JSON.parse(body.result.content[0].text) };
};

describe('POST /mcp/simulate_funding_regime', () => {
  const worked = {
    exchange: 'binance',
    spot_price: 50_000,
    mark_price: 50_050,
    position_size: 1,
    num_periods: 24,
    seed: 9,
  };

  it('reproduces the worked example in period 0 and is deterministic', async () => {
    const a = await (await post('/mcp/simulate_funding_regime', worked)).json();
    expect(a.periods).toHaveLength(24);
    expect(a.periods[0]).toMatchObject({ period_index: 0, funding_rate: 0.0005, payment: -25.025 });
    const b = await (await post('/mcp/simulate_funding_regime', worked)).json();
    expect(b).toEqual(a);
    const viaTool = await rpc('simulate_funding_regime', worked);
    expect(viaTool).toEqual({ isError: false, value: a });
  });

  it('refuses an unknown exchange and bad values with 422 naming the field', async () => {
    await expectError(
      await post('/mcp/simulate_funding_regime', { ...worked, exchange: 'nyse' }),
      422,
      'unprocessable',
      'exchange',
    );
    await expectError(
      await post('/mcp/simulate_funding_regime', { ...worked, spot_price: -1 }),
      422,
      'unprocessable',
      'spot_price',
    );
    expect((await rpc('simulate_funding_regime', { ...worked, exchange: 'nyse' })).isError).toBe(true);
  });
});

describe('GET /mcp/venues/{exchange}', () => {
  it.each(['binance', 'hyperliquid', 'okx', 'bybit', 'cme', 'sgx'])(
    '%s: details equal to the tool',
    async (exchange) => {
      const res = await fetch(`${stack.http.url}/mcp/venues/${exchange}`, { headers: { 'x-api-key': key } });
      expect(res.status).toBe(200);
      const details = await res.json();
      expect(details.exchange).toBe(exchange);
      expect(Array.isArray(details.unverified)).toBe(true);
      expect(await rpc('get_venue_details', { exchange })).toEqual({ isError: false, value: details });
    },
  );

  it('answers 404 for any other name', async () => {
    await expectError(
      await fetch(`${stack.http.url}/mcp/venues/nyse`, { headers: { 'x-api-key': key } }),
      404,
      'not_found',
    );
  });
});
