/**
 * Fuzzing the JSON-RPC edge's envelope and method parameters through the real app (`inject`, open
 * guard, a real nats-server): arbitrary bodies (not JSON, JSON of any shape, batches, calls of every
 * method with arbitrary params and ids) are answered with JSON-RPC responses (a result or an error
 * object) or a clear 4xx, never a 5xx, a hang or a stack trace.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { expectClean, FUZZ_RUNS, fuzzParams, fuzzText, fuzzTimeout, within } from './fuzz.ts';

const METHODS = [
  'eth_chainId',
  'eth_blockNumber',
  'net_version',
  'web3_clientVersion',
  'md_coins',
  'md_midPrice',
  'md_trades',
  'md_newFilter',
  'md_getFilterChanges',
  'md_uninstallFilter',
];

const config = testConfig();
let server: TestNats;
let nats: Nats;
let edge: TestJsonRpc;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  edge = await startTestJsonRpc(nats, config);
});

afterAll(async () => {
  await edge?.close();
  await nats?.nc.close();
  await server?.cleanup();
});

const param = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.record(
    {
      coin: fc.oneof(fc.constantFrom('BTC', 'eth', 'DOGE'), fuzzText()),
      coins: fc.array(fc.constantFrom('BTC', 'ETH', ''), { maxLength: 3 }),
      start_ms: fc.oneof(fc.integer(), fc.double(), fuzzText()),
      end_ms: fc.oneof(fc.integer(), fc.double(), fuzzText()),
      limit: fc.oneof(fc.integer(), fuzzText()),
      last_event_id: fc.oneof(fc.nat().map(String), fuzzText()),
      event_type: fc.constantFrom('trade', 'book', 'x'),
    },
    { requiredKeys: [] },
  ),
);

const call = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 0 })),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
    method: fc.oneof(fc.constantFrom(...METHODS), fuzzText()),
    params: fc.oneof(fc.array(param, { maxLength: 3 }), param),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  { weight: 5, arbitrary: call.map((c) => JSON.stringify(c)) },
  { weight: 2, arbitrary: fc.array(call, { maxLength: 5 }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fuzzText() },
);

it(`answers ${FUZZ_RUNS} generated bodies with JSON-RPC responses or a clear 4xx`, {
  timeout: fuzzTimeout(),
}, async () => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(body, async (payload) => {
      const res = await within(
        edge.rpc.app.inject({
          method: 'POST',
          url: '/',
          headers: { 'content-type': 'application/json' },
          payload,
        }),
        payload.slice(0, 200),
      );
      statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
      const what = `POST / ${payload.slice(0, 200)}`;
      expectClean(res.statusCode, res.body, what);
      if (res.statusCode === 200 && res.body !== '') {
        const answers = [JSON.parse(res.body)].flat() as Record<string, unknown>[];
        for (const a of answers) {
          expect(a.jsonrpc, what).toBe('2.0');
          expect('result' in a || 'error' in a, what).toBe(true);
        }
      }
    }),
    fuzzParams(),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, statuses: Object.fromEntries(statuses) }));
});
