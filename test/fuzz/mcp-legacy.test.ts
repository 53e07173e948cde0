/**
 * Fuzzing the `{base_url}` service through the real app (`inject`, the real guard with real keys:
 * Quant, Basic, and a Quant key scoped to `chain:hyperliquid` + `stream:read`; a real
 * nats-server): the MCP envelope (`POST /mcp`: any JSON-RPC shape, every tool with mutated
 * arguments), every legacy route's body, the manifest (`/mcp/config/validate`, generation) and
 * every normalizer's payloads (`/mcp/normalize`, the public fixtures of all five sources mutated
 * at up to three places). Each answer is a result or a clear 4xx whose body is a catalogue error
 * with the request id (MCP: a JSON-RPC response, never -32603, `internal` or `unknown`, and a tool's
 * `isError` content a catalogue error that is no 5xx), never a 5xx, a hang or stack text. A tool
 * or route that throws a plain Error shows as `internal` (HTTP 500, or inside an HTTP 200 on
 * POST /mcp), so the property fails on it. One exception, by contract: a valid generation request
 * no worker finishes in time is 504 `generation_timeout` (GENERATE_SYNC_DEADLINE_MS; no worker
 * runs here), as an HTTP status or a tool's error.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PRESETS } from '../../contracts/presets.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import {
  expectCatalogueBody,
  expectClean,
  expectRpcAnswer,
  FUZZ_RUNS,
  fuzzAssert,
  fuzzText,
  fuzzTimeout,
  mutated,
  within,
} from './fuzz.ts';

type Fixture = { request_symbol: string; payload: unknown };
const fixtures = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', 'fixtures', 'normalize-public.json'), 'utf8'),
) as { sources: Record<string, Fixture[]> };
const normalizeBodies = Object.entries(fixtures.sources).flatMap(([source, items]) =>
  items.map((f) => ({ source, symbol: f.request_symbol, events: [{ payload: f.payload }] })),
);
const manifests = PRESETS.map((p) => p.manifest);
const configs = manifests.map((m) => (m as { config?: unknown }).config ?? m);

let stack: TestStack;
const keys: Record<string, string> = {};
let tools: string[] = [];
/** Quant keys carry most inputs: a Basic key soon spends its burst (then 429 rate_limited). */
const who = fc.constantFrom('quant', 'quant', 'quant', 'chain', 'chain', 'basic');
/** 5xx rows an answer may carry by contract (see above). */
const ALLOWED_5XX = ['generation_timeout'];

beforeAll(async () => {
  stack = await startStack({ GENERATE_SYNC_DEADLINE_MS: '200' });
  keys.quant = (await stack.accounts.key('quant')).key;
  keys.basic = (await stack.accounts.key('basic')).key;
  keys.chain = (await stack.accounts.key('quant', { scopes: ['chain:hyperliquid', 'stream:read'] })).key;
  const listed = await stack.http.app.inject({ method: 'GET', url: '/mcp/tools/list' });
  tools = (listed.json() as { tools: { name: string }[] }).tools.map((t) => t.name);
});

afterAll(async () => {
  await stack?.close();
});

type Sent = {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  payload?: string;
  headers?: Record<string, string>;
};

const generationTimeout = (status: number, body: string) =>
  status === 504 && /"generation_timeout"/.test(body);

async function send(req: Sent, plan: string): Promise<{ status: number; body: string }> {
  const what = `(${plan}) ${req.method} ${req.url} ${req.payload?.slice(0, 300) ?? ''}`;
  const res = await within(
    stack.http.app.inject({
      method: req.method,
      url: req.url,
      headers: {
        'x-api-key': keys[plan] as string,
        ...(req.payload !== undefined ? { 'content-type': 'application/json' } : {}),
        ...req.headers,
      },
      ...(req.payload !== undefined ? { payload: req.payload } : {}),
    }),
    what,
  );
  if (!generationTimeout(res.statusCode, res.body)) expectClean(res.statusCode, res.body, what);
  if (res.statusCode >= 400 && res.statusCode !== 405) expectCatalogueBody(res.body, what, ALLOWED_5XX);
  return { status: res.statusCode, body: res.body };
}

const json = (v: unknown) => JSON.stringify(v);
const CACHE_KEY = `cache_${'0'.repeat(32)}`;
/** Valid arguments of each tool, the fuzzer's starting points. */
const TOOL_ARGS: Record<string, unknown[]> = {
  get_cache_manifest: [{ cache_key: CACHE_KEY }],
  export_cache: [{ cache_key: CACHE_KEY }],
  stream_cache: [{ cache_key: CACHE_KEY, after_seq: 0, limit: 10 }],
  delete_cache: [{ cache_key: CACHE_KEY }],
  simulate_funding_regime: [
    { exchange: 'binance', spot_price: 100, mark_price: 100.5, num_periods: 3 },
    { exchange: 'hyperliquid', spot_price: 1, mark_price: 2, position_size: -1, use_soft_cap: true },
    { exchange: 'cme', spot_price: 100, mark_price: 99, num_periods: 2, seed: 7, start_ts_ms: 0 },
  ],
  get_venue_details: [{ exchange: 'binance' }, { exchange: 'sgx' }],
  normalize_events: [
    ...normalizeBodies,
    ...normalizeBodies.slice(0, 3).map((b) => ({ ...b, enable_cache: true })),
  ],
  validate_config: [...configs.map((config) => ({ config })), { config: configs[0], duration_seconds: 60 }],
  generate_dataset: [
    { symbol: 'BTC', duration_seconds: 60 },
    { preset: PRESETS[0]?.name, duration_seconds: 60 },
    { config: configs[0], seed: 1 },
  ],
};

/** The route a request went to, for the summary (`/mcp/venues/:exchange`). */
const route = (url: string) =>
  (url.split('?')[0] ?? '')
    .replace(/^\/mcp\/venues\/.*/, '/mcp/venues/:exchange')
    .replace(/^\/mcp\/caches\/.*\/manifest$/, '/mcp/caches/:key/manifest')
    .replace(/^\/data\/jobs\/.*/, '/data/jobs/:id');
/** A body: mutated examples mostly, arbitrary JSON or text sometimes. */
const bodyOf = (examples: readonly unknown[]) =>
  fc.oneof({ weight: 6, arbitrary: mutated(examples).map(json) }, { weight: 1, arbitrary: fuzzText() });

it(`MCP envelope: ${FUZZ_RUNS} generated JSON-RPC bodies on POST /mcp`, {
  timeout: fuzzTimeout(),
}, async () => {
  const toolArgs = fc.oneof(
    mutated(normalizeBodies),
    mutated(configs.map((config) => ({ config }))),
    fc.jsonValue({ maxDepth: 2 }),
  );
  /** A well-formed `tools/call` of a listed tool with its arguments mutated (or none). */
  const toolCall = fc
    .tuple(fc.constantFrom(...tools), fc.nat())
    .chain(([name, id]) =>
      fc
        .oneof({ weight: 6, arbitrary: mutated(TOOL_ARGS[name] ?? [{}]) }, toolArgs)
        .map((args) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })),
    );
  const anyCall = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 0 })),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 6 }), fc.constant(null)),
      method: fc.oneof(
        fc.constantFrom('initialize', 'tools/list', 'tools/call', 'ping', 'notifications/initialized'),
        fuzzText(),
      ),
      params: fc.oneof(
        fc.record(
          { name: fc.oneof(fc.constantFrom(...tools), fuzzText()), arguments: toolArgs },
          { requiredKeys: [] },
        ),
        fc.record({
          protocolVersion: fc.constantFrom('2024-11-05', 'x'),
          capabilities: fc.jsonValue({ maxDepth: 1 }),
        }),
        fc.jsonValue({ maxDepth: 1 }),
      ),
    },
    { requiredKeys: [] },
  );
  const call = fc.oneof({ weight: 3, arbitrary: toolCall }, { weight: 2, arbitrary: anyCall });
  const body = fc.oneof(
    { weight: 6, arbitrary: call.map(json) },
    { weight: 2, arbitrary: fc.array(call, { maxLength: 4 }).map(json) },
    { weight: 1, arbitrary: fuzzText() },
  );
  const outcomes = new Map<string, number>();
  const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  await fuzzAssert(
    fc.asyncProperty(body, who, async (payload, plan) => {
      const what = `(${plan}) POST /mcp ${payload.slice(0, 300)}`;
      const res = await send(
        { method: 'POST', url: '/mcp', payload, headers: { accept: 'application/json, text/event-stream' } },
        plan,
      );
      // A failure of the whole request (key, rate limit) is its HTTP status and error body (send).
      if (res.status !== 200) {
        count(String(res.status));
        return;
      }
      for (const a of [JSON.parse(res.body)].flat() as Record<string, unknown>[]) {
        expectRpcAnswer(a, what);
        const result = a.result as { isError?: unknown; content?: { text?: unknown }[] } | undefined;
        if (result?.isError === true)
          expectCatalogueBody(String(result.content?.[0]?.text), `${what}: tool error`, ALLOWED_5XX);
        const code = (a.error as { code?: number } | undefined)?.code;
        count(`${res.status} ${code ?? (result?.isError ? 'isError' : 'result')}`);
      }
    }),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, outcomes: Object.fromEntries(outcomes) }));
  expect(outcomes.get('200 result')).toBeGreaterThan(0);
  expect(outcomes.get('200 isError')).toBeGreaterThan(0);
});

it(`legacy routes, manifest and normalizers: ${FUZZ_RUNS} generated requests`, {
  timeout: fuzzTimeout(),
}, async () => {
  const statuses = new Map<string, number>();
  const request: fc.Arbitrary<Sent> = fc.oneof(
    bodyOf(normalizeBodies).map((payload) => ({ method: 'POST' as const, url: '/mcp/normalize', payload })),
    bodyOf([
      ...configs.map((config) => ({ config })),
      ...manifests.map((config) => ({ config, duration_seconds: 60 })),
    ]).map((payload) => ({ method: 'POST' as const, url: '/mcp/config/validate', payload })),
    bodyOf(configs.map((config) => ({ config, duration_seconds: 60 }))).map((payload) => ({
      method: 'POST' as const,
      url: '/mcp/generate_dataset',
      payload,
    })),
    bodyOf(manifests.map((m) => ({ ...(m as object), duration_seconds: 60 }))).map((payload) => ({
      method: 'POST' as const,
      url: '/data/generate?async=true',
      payload,
    })),
    bodyOf([{ exchange: 'binance', symbol: 'BTC', hours: 24 }]).map((payload) => ({
      method: 'POST' as const,
      url: '/mcp/simulate_funding_regime',
      payload,
    })),
    fuzzText().map((s) => ({ method: 'GET' as const, url: `/mcp/venues/${encodeURIComponent(s)}` })),
    fuzzText().map((s) => ({ method: 'GET' as const, url: `/mcp/caches/${encodeURIComponent(s)}/manifest` })),
    fuzzText().map((s) => ({ method: 'GET' as const, url: `/data/jobs/${encodeURIComponent(s)}` })),
  );
  await fuzzAssert(
    fc.asyncProperty(request, who, async (req, plan) => {
      const res = await send(req, plan);
      const k = `${route(req.url)} ${res.status}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
    }),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, statuses: Object.fromEntries(statuses) }));
});
