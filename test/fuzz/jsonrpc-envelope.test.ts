/**
 * Fuzzing the JSON-RPC edge's envelope and method parameters through the real app (`inject`) behind
 * the real API-key guard, with real keys (a Quant key, a Basic key, a Quant key scoped to
 * `chain:hyperliquid` + `stream:read`), on a real nats-server holding trades and books of two
 * sources. Inputs: arbitrary bodies (not JSON, JSON of any shape, batches) and calls of every
 * method with near-valid and arbitrary params and ids, filter ids the run has made included.
 *
 * The property: every answer is a JSON-RPC response (a result, or an error of the catalogue other
 * than -32603 / `internal` / `unknown`, with the request id) or a clear 4xx; never a 5xx, a hang
 * or stack text. A method that throws a plain Error is answered -32603 in an HTTP 200, so this
 * property fails on it where "status below 500" alone passed.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import {
  expectClean,
  expectRpcAnswer,
  FUZZ_RUNS,
  fuzzAssert,
  fuzzText,
  fuzzTimeout,
  mutated,
  within,
} from './fuzz.ts';

const METHODS = [
  'eth_chainId',
  'eth_blockNumber',
  'net_version',
  'web3_clientVersion',
  'md_coins',
  'md_midPrice',
  'md_l2Book',
  'md_trades',
  'md_newFilter',
  'md_getFilterChanges',
  'md_uninstallFilter',
];
/** The publisher's trades are stamped from this time on (test/support/publisher.ts). */
const T0 = 1_767_225_600_000;

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestJsonRpc;
const keys: Record<string, string> = {};
/** Filter ids the run has installed (the newest few per key), so that polls reach real filters. */
const filters: Record<string, string[]> = {};

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  const synthetic = publishAtRate(nats.js, ['BTC', 'ETH'], 400, { booksEvery: 3 });
  const hyperliquid = publishAtRate(nats.js, ['BTC', 'SOL'], 200, { booksEvery: 3, source: 'hyperliquid' });
  while (synthetic.published() < 30 || hyperliquid.published() < 15)
    await new Promise((r) => setTimeout(r, 10));
  await Promise.all([synthetic.stop(), hyperliquid.stop()]);
  edge = await startTestJsonRpc(nats, config, { guard: 'keys' });
  keys.quant = (await accounts.key('quant')).key;
  keys.basic = (await accounts.key('basic')).key;
  keys.chain = (await accounts.key('quant', { scopes: ['chain:hyperliquid', 'stream:read'] })).key;
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await base?.close();
});

const coin = fc.oneof(fc.constantFrom('BTC', 'eth', 'SOL', 'DOGE', 'NOPE1', ''), fuzzText());
const source = fc.oneof(fc.constantFrom('synthetic', 'hyperliquid', 'binance', 'nope'), fuzzText());
const ms = fc.oneof(
  fc.integer({ min: T0 - 5_000, max: T0 + 5_000 }),
  fc.constantFrom(0, -1, T0, 2 ** 53, Number.MAX_SAFE_INTEGER),
  fc.integer(),
  fc.double(),
);
const filterId = fc.oneof(
  fc.nat().map((i) => ({ from: i })),
  fc.constantFrom(`0x${'0'.repeat(28)}`, `0x${'f'.repeat(28)}`, '0x', 'nope'),
  fuzzText(),
);
const subscription = fc.record(
  {
    coins: fc.oneof(
      fc.array(coin, { maxLength: 4 }),
      fc.constantFrom(Array(600).fill('BTC'), Array(300).fill('NOPE')),
      fc.array(
        fc.nat(2_000).map((i) => `C${i}`),
        { minLength: 90, maxLength: 200 },
      ),
    ),
    event_types: fc.array(fc.oneof(fc.constantFrom('trade', 'book', 'funding'), fuzzText()), {
      maxLength: 3,
    }),
    sources: fc.array(source, { maxLength: 3 }),
    last_event_id: fc.oneof(fc.nat(200), fc.constantFrom(-1, 2 ** 53), fuzzText()),
  },
  { requiredKeys: [] },
);

/** Valid params of each method, mutated in up to three places by `mutated`. */
const EXAMPLES: Record<string, unknown[]> = {
  md_midPrice: [{ coin: 'BTC' }, ['ETH', 'synthetic'], { coin: 'BTC', source: 'hyperliquid' }],
  md_l2Book: [
    { coin: 'BTC', depth: 5 },
    ['ETH', 1000],
    { coin: 'SOL', source: 'hyperliquid' },
    ['BTC', 1001],
  ],
  md_trades: [
    { coin: 'BTC', start_ms: T0, end_ms: T0 + 60_000, limit: 10 },
    ['ETH', T0 - 1, T0 + 1_000],
    { coin: 'SOL', start_ms: T0, end_ms: T0 + 86_400_000 * 3 },
  ],
  md_newFilter: [[{ coins: ['BTC'] }], { filter: { event_types: ['trade'], last_event_id: 1 } }, []],
};

/** A call's params: per-method near-valid shapes, filter ids, or arbitrary JSON. */
const params = fc.oneof(
  { weight: 3, arbitrary: mutated(Object.values(EXAMPLES).flat()) },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        coin,
        source,
        depth: fc.oneof(fc.integer(), fc.constantFrom(1, 1000, 1001)),
        start_ms: ms,
        end_ms: ms,
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.oneof(
      subscription.map((f) => [f]),
      subscription.map((filter) => ({ filter })),
    ),
  },
  { weight: 3, arbitrary: filterId.map((f) => [f]) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/** Mostly well-formed calls of the edge's methods (to reach the methods), sometimes any envelope. */
const call = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record(
      {
        jsonrpc: fc.constant('2.0'),
        id: fc.oneof(fc.nat(), fc.string({ maxLength: 8 })),
        method: fc.constantFrom(...METHODS),
        params,
      },
      { requiredKeys: ['jsonrpc', 'id', 'method'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 0 })),
        id: fc.oneof(
          fc.integer(),
          fc.string({ maxLength: 8 }),
          fc.constant(null),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        method: fc.oneof(fc.constantFrom(...METHODS), fuzzText()),
        params,
      },
      { requiredKeys: [] },
    ),
  },
);

type Body = { kind: 'json'; value: unknown } | { kind: 'text'; text: string };
const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 6, arbitrary: call.map((value) => ({ kind: 'json' as const, value })) },
  {
    weight: 2,
    arbitrary: fc
      .array(call, { minLength: 1, maxLength: 12 })
      .map((value) => ({ kind: 'json' as const, value })),
  },
  { weight: 1, arbitrary: fc.jsonValue().map((value) => ({ kind: 'json' as const, value })) },
  { weight: 1, arbitrary: fuzzText().map((text) => ({ kind: 'text' as const, text })) },
);
/** Quant keys carry most inputs: a Basic key soon spends its 25-token burst (then 429 rate_limited). */
const who = fc.constantFrom('quant', 'quant', 'quant', 'chain', 'chain', 'basic');

/** The body as sent: `{ from: i }` filter ids become the i-th (modulo) id this key installed. */
function render(b: Body, plan: string): string {
  if (b.kind === 'text') return b.text;
  const own = filters[plan] ?? [];
  return (
    JSON.stringify(b.value, (_, v) =>
      v &&
      typeof v === 'object' &&
      !Array.isArray(v) &&
      Object.keys(v).length === 1 &&
      typeof v.from === 'number'
        ? (own[v.from % Math.max(1, own.length)] ?? `0x${'1'.repeat(28)}`)
        : v,
    ) ?? 'null'
  );
}

/** Keeps the newest filter ids a key installed (at most 8 per key). */
function remember(plan: string, answers: Record<string, unknown>[]): void {
  const own = filters[plan] ?? [];
  filters[plan] = own;
  for (const a of answers)
    if (typeof a.result === 'string' && /^0x[0-9a-f]{28}$/.test(a.result)) {
      own.push(a.result);
      if (own.length > 8) own.shift();
    }
}

it(`answers ${FUZZ_RUNS} generated bodies with JSON-RPC responses (no -32603, internal or unknown) or a clear 4xx`, {
  timeout: fuzzTimeout(),
}, async () => {
  const outcomes = new Map<string, number>();
  const count = (k: string) => outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  await fuzzAssert(
    fc.asyncProperty(body, who, async (b, plan) => {
      const payload = render(b, plan);
      const what = `(${plan}) POST / ${payload.slice(0, 300)}`;
      const res = await within(
        edge.rpc.app.inject({
          method: 'POST',
          url: '/',
          headers: { 'content-type': 'application/json', 'x-api-key': keys[plan] as string },
          payload,
        }),
        what,
      );
      expectClean(res.statusCode, res.body, what);
      if (res.body === '') {
        count(String(res.statusCode));
        return;
      }
      const answers = [JSON.parse(res.body)].flat() as Record<string, unknown>[];
      for (const a of answers) {
        expectRpcAnswer(a, what);
        const code = (a.error as { code?: number } | undefined)?.code;
        count(`${res.statusCode} ${code ?? 'result'}`);
      }
      remember(plan, answers);
    }),
  );
  console.log(JSON.stringify({ runs: FUZZ_RUNS, outcomes: Object.fromEntries(outcomes) }));
  expect(outcomes.get('200 result')).toBeGreaterThan(0);
  expect(outcomes.get('200 -32602')).toBeGreaterThan(0);
});
