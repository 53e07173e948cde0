/**
 * Derived bars through the TypeScript client and `mdp bars`, against a real nats-server, the real
 * derived producer, a JSON-RPC edge and a unified edge with the real key guard: trades of five
 * known minutes become five stored 1-minute bars; `JsonRpcClient.ohlcv` returns exactly what the
 * `DERIVED` stream holds (each with its `seq`); `mdp bars` run as a process prints the same bars
 * (NDJSON field for field, and as a table); a bad command line is exit 2 with nothing on stdout;
 * `--follow` prints the next bar once it closes, resumed after the last one, then stops on Ctrl-C.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, expect, expectTypeOf, it } from 'vitest';
import { streamGrpc } from '../../clients/typescript/src/grpc.ts';
import {
  type BarStreamEvent,
  barKindOf,
  isBar,
  JsonRpcClient,
  stream,
  type UnifiedStream,
} from '../../clients/typescript/src/index.ts';
import type { ResumingStream } from '../../clients/typescript/src/resuming-stream.ts';
import type { TradeEvent } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { DERIVED_ALL } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { type DerivedRunner, startDerivedRunner } from '../../producers/derived/runner.ts';
import { freshConfigDir, runCli, startCli } from '../support/cli.ts';
import { readAll } from '../support/derived-reference.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestGrpc } from '../support/grpc.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { publishNow } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const T0 = 1_767_225_600_000; // an hour boundary
const MIN = 60_000;
const END = T0 + 10 * MIN;

let base: BaseStack;
let rpc: TestJsonRpc;
let sse: TestGateway;
let runner: DerivedRunner;
let key: string;
let env: Record<string, string>;
const dir = freshConfigDir();

let tradeNo = 0;
const trade = (symbol: string, ts: number, price: number, size: number): TradeEvent => ({
  event_type: 'trade',
  source: 'synthetic',
  symbol,
  timestamp_ms: ts,
  capture_time_ms: ts,
  side: tradeNo % 2 ? 'buy' : 'sell',
  price,
  size,
  trade_id: `trd_bars_${tradeNo++}`,
  notional_usd: price * size,
});

/** Minute k of BTC: open 100+k, high 103+k, low 99+k, close 101+k, volume 6, 4 trades; ETH alongside. */
const minute = (k: number): TradeEvent[] =>
  [100, 103, 99, 101].flatMap((p, i) => [
    trade('BTC', T0 + k * MIN + 1_000 + i * 14_000, p + k, i % 2 ? 2 : 1),
    trade('ETH', T0 + k * MIN + 2_000 + i * 14_000, 3_000 + k, 1),
  ]);

/** The BTC 1-minute bars the DERIVED stream holds, as served: `seq` first. */
async function storedBtc1m(): Promise<BarStreamEvent[]> {
  return (await readAll(base.nats, STREAMS.DERIVED, DERIVED_ALL))
    .filter((m) => m.subject === 'dv.synthetic.BTC.bar_1m')
    .map((m) => ({ seq: m.seq, ...JSON.parse(m.text) }));
}

/** The complete lines written so far (a pipe may hand over half a line), parsed. */
const lines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .slice(0, -1)
    .map((l) => JSON.parse(l));

/** The first `n` events of an iterator (a failure throws: `maxAttempts: 1`). */
async function firstEvents<E extends BarStreamEvent>(s: ResumingStream<E>, n: number): Promise<E[]> {
  const out: E[] = [];
  for await (const item of s) {
    if (item.type === 'event') out.push(item.event);
    if (out.length === n) break;
  }
  return out;
}

beforeAll(async () => {
  base = await startBase();
  rpc = await startTestJsonRpc(base.nats, base.config, { guard: 'keys' });
  sse = await startTestGateway(base.server.url, {}, { guard: 'keys' });
  key = (await base.accounts.key('quant')).key;
  env = { MDP_API_KEY: key, MDP_RPC_URL: rpc.url, MDP_STREAM_URL: sse.url, MDP_CONFIG_DIR: dir };
  runner = startDerivedRunner(base.nats, createLogger('silent'));
  // Minutes 0-4, then a trade 3 s into minute 5: the watermark passes minute 4's end + the 2 s grace.
  await publishNow(base.nats.js, [
    ...[0, 1, 2, 3, 4].flatMap(minute),
    trade('BTC', T0 + 5 * MIN + 3_000, 105, 1),
  ]);
  await eventually(async () => (await storedBtc1m()).length === 5, 20_000, 'five BTC 1-minute bars stored');
}, 60_000);

afterAll(async () => {
  await runner?.stop();
  await sse?.close();
  await rpc?.close();
  await base?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('client.ohlcv returns exactly the bars DERIVED holds, with their seq, typed as bars', async () => {
  const client = new JsonRpcClient({ url: rpc.url, key });
  const stored = await storedBtc1m();
  const answer = await client.ohlcv({ coin: 'BTC', interval: '1m', start_ms: T0, end_ms: END });
  expectTypeOf(answer.bars).toEqualTypeOf<BarStreamEvent[]>();
  expect(answer).toEqual({
    coin: 'BTC',
    interval: '1m',
    start_ms: T0,
    end_ms: END,
    truncated: false,
    bars: stored,
  });
  // The known trades, bar by bar.
  expect(
    answer.bars.map((b) => [b.start_ms, b.open, b.high, b.low, b.close, b.volume, b.trade_count]),
  ).toEqual([0, 1, 2, 3, 4].map((k) => [T0 + k * MIN, 100 + k, 103 + k, 99 + k, 101 + k, 6, 4]));
  expect(answer.bars.every(isBar)).toBe(true);
  // [start, end) of bar starts, one source named.
  const some = await client.ohlcv({
    coin: 'BTC',
    interval: '1m',
    start_ms: T0 + MIN,
    end_ms: T0 + 3 * MIN,
    source: 'synthetic',
  });
  expect(some).toMatchObject({ source: 'synthetic', truncated: false, bars: stored.slice(1, 3) });
});

it('stream() and streamGrpc() selecting bar_1m yield the same bars, typed as bars', async () => {
  const stored = await storedBtc1m();
  const grpc = await startTestGrpc(base.nats, base.config);
  try {
    const opts = { key, coins: ['BTC'], eventTypes: [barKindOf('1m')], from: 0, maxAttempts: 1 };
    const overSse = stream({ ...opts, url: sse.url });
    const overGrpc = streamGrpc({ ...opts, target: grpc.target });
    expectTypeOf(overSse).toEqualTypeOf<UnifiedStream<BarStreamEvent>>();
    expectTypeOf(overGrpc).toEqualTypeOf<ResumingStream<BarStreamEvent>>();
    const [a, b] = await Promise.all([firstEvents(overSse, 5), firstEvents(overGrpc, 5)]);
    expect(a).toEqual(stored);
    expect(b).toEqual(stored);
  } finally {
    await grpc.close();
  }
}, 30_000);

it('mdp bars prints those bars: NDJSON field for field, and a table', async () => {
  const stored = await storedBtc1m();
  const range = [
    '--coin',
    'BTC',
    '--interval',
    '1m',
    '--from',
    new Date(T0).toISOString(),
    '--to',
    String(END),
  ];
  const [json, table] = await Promise.all([
    runCli(['bars', ...range, '--json'], env),
    runCli(['bars', ...range], env),
  ]);
  expect(json.code, json.stderr).toBe(0);
  expect(lines(json.stdout)).toEqual(stored);
  expect(json.stderr).toBe('');
  expect(table.code, table.stderr).toBe(0);
  const rows = table.stdout.trimEnd().split('\n');
  expect(rows[0]?.split(/\s+/)).toEqual([
    'start',
    'source',
    'open',
    'high',
    'low',
    'close',
    'volume',
    'trades',
    'vwap',
  ]);
  expect(rows.slice(1).map((r) => r.split(/\s+/))).toEqual(
    stored.map((b) => [
      new Date(b.start_ms).toISOString(),
      'synthetic',
      ...[b.open, b.high, b.low, b.close, b.volume, b.trade_count, b.vwap].map(String),
    ]),
  );
}, 30_000);

it('a bad command line is exit 2 with the reason on stderr and nothing on stdout', async () => {
  const from = ['--from', String(T0)];
  const [interval, coin, order] = await Promise.all([
    runCli(['bars', '--coin', 'BTC', '--interval', '5m', ...from, '--to', String(END)], env),
    runCli(['bars', '--interval', '1m', ...from, '--to', String(END)], env),
    runCli(['bars', '--coin', 'BTC', '--interval', '1m', '--from', String(END), '--to', String(T0)], env),
  ]);
  expect([interval.code, coin.code, order.code]).toEqual([2, 2, 2]);
  expect([interval.stdout, coin.stdout, order.stdout]).toEqual(['', '', '']);
  expect(interval.stderr).toContain('--interval must be one of 1s, 1m, 1h, got "5m"');
  expect(coin.stderr).toContain('--coin is required');
  expect(order.stderr).toContain('--to must be at or after --from');
}, 30_000);

it('--follow prints the range, then the next bar once it closes, and stops on Ctrl-C', async () => {
  const cli = startCli(
    [
      'bars',
      '--coin',
      'BTC',
      '--interval',
      '1m',
      '--from',
      String(T0),
      '--to',
      String(END),
      '--json',
      '--follow',
    ],
    env,
  );
  await eventually(() => lines(cli.stdout()).length === 5, 15_000, 'the five stored bars');
  // Minute 5 closes once BTC's watermark passes T0 + 6 min + 2 s.
  await publishNow(base.nats.js, [
    trade('BTC', T0 + 5 * MIN + 30_000, 107, 1),
    trade('BTC', T0 + 6 * MIN + 3_000, 108, 1),
  ]);
  await eventually(() => lines(cli.stdout()).length === 6, 15_000, 'the live bar');
  cli.child.kill('SIGINT');
  const done = await cli.exited;
  expect(done.code, done.stderr).toBe(130);
  const stored = await storedBtc1m();
  expect(stored).toHaveLength(6);
  expect(lines(done.stdout)).toEqual(stored);
  expect(stored[5]).toMatchObject({ start_ms: T0 + 5 * MIN, open: 105, close: 107, trade_count: 2 });
}, 40_000);
