/**
 * Every tool of the real app over MCP: the real `{base_url}` app (`buildHttpApp`, real guard and
 * accounts) and a real generation worker on a private nats-server (test/support/stack.ts). The
 * official MCP SDK client lists the tools and calls each one it lists: with valid arguments it gets
 * `isError: false` and a result of the tool's shape; with one invalid argument, `isError: true` and
 * the error body (code, message, request id, the offending field). A listed tool without a case
 * here fails.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PRESET_NAMES } from '../../contracts/presets.ts';
import { parseMarketModelConfig } from '../../producers/simulator/config.ts';
import { simulateBlock } from '../../producers/simulator/market.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let base = '';

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  base = stack.http.url;
});

afterAll(async () => {
  await stack?.close();
});

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };
type Args = Record<string, unknown>;
/** A tool's valid arguments (made when needed: caches are created first), and what its result is. */
type Case = {
  valid: () => Promise<Args> | Args;
  check: (value: Record<string, unknown>, args: Args) => void | Promise<void>;
  /** One invalid argument: the arguments, the error code and the field it names. */
  invalid: (valid: Args) => [Args, string, string];
};

const events = simulateBlock(parseMarketModelConfig({ symbol: 'BTC', seed: 4 }), 0).slice(0, 20);
const CACHE_KEY = /^cache_[0-9a-f]{32}$/;
const HASH = /^sha256:[0-9a-f]{64}$/;

let client: Client;
let key = '';

async function call(name: string, args: Args): Promise<{ isError: boolean; value: Record<string, unknown> }> {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.content, name).toHaveLength(1);
  expect(r.content[0]?.type, name).toBe('text');
  return { isError: r.isError === true, value: JSON.parse(r.content[0]?.text ?? 'null') };
}

/** A fresh cache of `events` through the tool itself. */
async function newCache(): Promise<string> {
  const { isError, value } = await call('normalize_events', {
    source: 'synthetic',
    events: events.map((payload) => ({ payload })),
    enable_cache: true,
  });
  expect(isError).toBe(false);
  return value.cache_key as string;
}

const CASES: Record<string, Case> = {
  get_health: {
    valid: () => ({}),
    check: (v) =>
      expect(v).toMatchObject({
        status: 'ok',
        version: expect.any(String),
        nats: 'connected',
        uptime_seconds: expect.any(Number),
      }),
    invalid: () => [{ verbose: true }, 'unprocessable', 'verbose'],
  },
  get_presets: {
    valid: () => ({}),
    check: (v) => expect((v.presets as { name: string }[]).map((p) => p.name)).toEqual(PRESET_NAMES),
    invalid: () => [{ venue: 'binance' }, 'unprocessable', 'venue'],
  },
  get_config_schema: {
    valid: () => ({}),
    check: (v) => {
      expect(v.type).toBe('object');
      expect(v.properties).toHaveProperty('config');
    },
    invalid: () => [{ format: 'yaml' }, 'unprocessable', 'format'],
  },
  validate_config: {
    valid: () => ({ config: { symbol: 'BTC', seed: 7 }, duration_seconds: 120 }),
    check: (v) => {
      expect(v).toMatchObject({ valid: true, errors: [], duration_seconds: 120 });
      expect(v.hash).toMatch(HASH);
    },
    invalid: () => [{ config: 'BTC' }, 'invalid_params', 'config'],
  },
  generate_dataset: {
    valid: () => ({ symbol: 'SOL', seed: 5, duration_seconds: 60 }),
    check: async (v) => {
      expect(v).toMatchObject({ status: 'completed', storage_backend: 'local' });
      expect(v.manifest_hash).toMatch(HASH);
      expect(v.row_count).toBeGreaterThan(0);
      const file = await fetch(v.download_url as string, { headers: { 'x-api-key': key } });
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBe(v.content_length_bytes);
    },
    invalid: (a) => [{ ...a, seed: -1 }, 'unprocessable', 'seed'],
  },
  normalize_events: {
    valid: () => ({
      source: 'synthetic',
      events: events.map((payload) => ({ payload })),
      enable_cache: true,
    }),
    check: (v) => {
      expect(v.events).toEqual(events);
      expect(v.rejected).toEqual([]);
      expect(v.cache_key).toMatch(CACHE_KEY);
    },
    invalid: (a) => [{ ...a, source: 'nyse' }, 'unprocessable', 'source'],
  },
  get_cache_stats: {
    valid: async () => {
      await newCache();
      return {};
    },
    check: (v) => {
      const caches = v.caches as { cache_key: string; events: number }[];
      expect(caches.length).toBeGreaterThan(0);
      for (const c of caches) expect(c).toMatchObject({ cache_key: expect.stringMatching(CACHE_KEY) });
      expect(v.totals).toMatchObject({ caches: caches.length, events: expect.any(Number) });
    },
    invalid: () => [{ symbol: 'BTC' }, 'unprocessable', 'symbol'],
  },
  get_cache_manifest: {
    valid: async () => ({ cache_key: await newCache() }),
    check: (v, a) => {
      expect(v).toMatchObject({ cache_key: a.cache_key, source: 'synthetic', event_count: events.length });
      expect(v.content_hash).toMatch(/^sha256:/);
    },
    invalid: (a) => [{ ...a, cache_key: 42 }, 'invalid_params', 'cache_key'],
  },
  export_cache: {
    valid: async () => ({ cache_key: await newCache() }),
    check: async (v, a) => {
      expect(v.download_url).toBe(`${base}/mcp/caches/export/${a.cache_key}`);
      const file = await fetch(v.download_url as string, { headers: { 'x-api-key': key } });
      expect(file.status).toBe(200);
      expect(new TextDecoder().decode((await file.arrayBuffer()).slice(-4))).toBe('PAR1');
    },
    invalid: (a) => [{ ...a, format: 'csv' }, 'unprocessable', 'format'],
  },
  stream_cache: {
    valid: async () => ({ cache_key: await newCache(), limit: 5 }),
    check: (v, a) => {
      expect(v.stream_url).toBe(`${base}/mcp/caches/stream/${a.cache_key}`);
      const got = v.events as { seq: number }[];
      expect(got.map(({ seq: _s, ...e }) => e)).toEqual(events.slice(0, 5));
      expect(v).toMatchObject({ next_after_seq: got[4]?.seq, complete: false });
    },
    invalid: (a) => [{ ...a, limit: 5_000 }, 'unprocessable', 'limit'],
  },
  delete_cache: {
    valid: async () => ({ cache_key: await newCache() }),
    check: async (v, a) => {
      expect(v).toEqual({ deleted: true, cache_key: a.cache_key });
      const again = await call('get_cache_manifest', { cache_key: a.cache_key });
      expect(again).toMatchObject({ isError: true, value: { error: 'not_found' } });
    },
    invalid: (a) => [{ ...a, confirm: true }, 'unprocessable', 'confirm'],
  },
  simulate_funding_regime: {
    valid: () => ({
      exchange: 'binance',
      spot_price: 50_000,
      mark_price: 50_050,
      position_size: 1,
      num_periods: 24,
    }),
    check: (v) => {
      expect(v.periods).toHaveLength(24);
      expect((v.periods as Record<string, unknown>[])[0]).toMatchObject({
        period_index: 0,
        funding_rate: 0.0005,
      });
      expect(v.summary).toBeTypeOf('object');
    },
    invalid: (a) => [{ ...a, spot_price: -1 }, 'unprocessable', 'spot_price'],
  },
  export_range: {
    valid: () => ({ coins: ['BTC'], from: Date.now() - 60_000, to: Date.now() - 1, format: 'csv' }),
    check: (v) => {
      expect(v).toMatchObject({ status: 'queued', format: 'csv', job_id: expect.stringMatching(/^export_/) });
      expect(v.status_url).toMatch(/\/data\/jobs\/export_/);
    },
    invalid: (a) => [{ ...a, format: 'xlsx' }, 'unprocessable', 'format'],
  },
  get_venue_details: {
    valid: () => ({ exchange: 'okx' }),
    check: (v) => expect(JSON.stringify(v)).toMatch(/okx/i),
    invalid: () => [{ exchange: 'okx', product: 'spot' }, 'unprocessable', 'product'],
  },
};

async function callBothWays(name: string, c: Case): Promise<void> {
  const args = await c.valid();
  const ok = await call(name, args);
  expect(ok.isError, JSON.stringify(ok.value)).toBe(false);
  await c.check(ok.value, args);

  const [badArgs, code, field] = c.invalid(args);
  const bad = await call(name, badArgs);
  expect(bad.isError, JSON.stringify(bad.value)).toBe(true);
  expect(bad.value).toMatchObject({
    error: code,
    message: expect.any(String),
    request_id: expect.stringMatching(/^req_[0-9a-f]{20}$/),
    details: { field },
  });
}

it('calls every listed tool with valid arguments and with one invalid argument', async () => {
  key = (await stack.accounts.key('quant')).key;
  client = new Client({ name: 'e2e-every-tool', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  try {
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThanOrEqual(13);
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(CASES).sort());
    // Every tool is tried; the failures are reported together.
    const failures: string[] = [];
    for (const tool of tools) {
      try {
        await callBothWays(tool.name, CASES[tool.name] as Case);
      } catch (err) {
        failures.push(`${tool.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    expect(failures).toEqual([]);
  } finally {
    await client.close();
  }
}, 120_000);
