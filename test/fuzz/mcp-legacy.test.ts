/**
 * Fuzzing the `{base_url}` service through the real app (`inject`, the real guard with a Quant key,
 * a real nats-server): the MCP envelope (`POST /mcp`: any JSON-RPC shape, every tool with mutated
 * arguments), every legacy route's body, the manifest (`/mcp/config/validate`, generation) and
 * every normalizer's payloads (`/mcp/normalize`, the public fixtures of all five sources mutated
 * at up to three places). Each answer is a result or a clear 4xx (MCP: a JSON-RPC response),
 * never a 5xx, a hang or a stack trace. One exception, by contract: a valid generation request no
 * worker finishes in time is 504 `generation_timeout` (GENERATE_SYNC_DEADLINE_MS; no worker runs here).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PRESETS } from '../../contracts/presets.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { expectClean, FUZZ_RUNS, fuzzParams, fuzzText, fuzzTimeout, mutated, within } from './fuzz.ts';

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
let key = '';
let tools: string[] = [];

beforeAll(async () => {
  stack = await startStack({ GENERATE_SYNC_DEADLINE_MS: '200' });
  key = (await stack.accounts.key('quant')).key;
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

async function send(req: Sent): Promise<{ status: number; body: string }> {
  const what = `${req.method} ${req.url} ${req.payload?.slice(0, 300) ?? ''}`;
  const res = await within(
    stack.http.app.inject({
      method: req.method,
      url: req.url,
      headers: {
        'x-api-key': key,
        ...(req.payload !== undefined ? { 'content-type': 'application/json' } : {}),
        ...req.headers,
      },
      ...(req.payload !== undefined ? { payload: req.payload } : {}),
    }),
    what,
  );
  if (!generationTimeout(res.statusCode, res.body)) expectClean(res.statusCode, res.body, what);
  return { status: res.statusCode, body: res.body };
}

const json = (v: unknown) => JSON.stringify(v);
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
  const call = fc.record(
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
  const body = fc.oneof(
    { weight: 6, arbitrary: call.map(json) },
    { weight: 2, arbitrary: fc.array(call, { maxLength: 4 }).map(json) },
    { weight: 1, arbitrary: fuzzText() },
  );
  await fc.assert(
    fc.asyncProperty(body, async (payload) => {
      const res = await send({
        method: 'POST',
        url: '/mcp',
        payload,
        headers: { accept: 'application/json, text/event-stream' },
      });
      if (res.status === 200) {
        for (const a of [JSON.parse(res.body)].flat() as Record<string, unknown>[]) {
          expect(a.jsonrpc).toBe('2.0');
          expect('result' in a || 'error' in a).toBe(true);
        }
      }
    }),
    fuzzParams(),
  );
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
  await fc.assert(
    fc.asyncProperty(request, async (req) => {
      const res = await send(req);
      const k = `${route(req.url)} ${res.status}`;
      statuses.set(k, (statuses.get(k) ?? 0) + 1);
    }),
    fuzzParams(),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, statuses: Object.fromEntries(statuses) }));
});
