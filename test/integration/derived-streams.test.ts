/**
 * The derived series (issue 31 §4: bars and book snapshots in the `DERIVED` stream) selected on the
 * transports, with bars stored on `dv.<source>.<symbol>.<kind>` as the derived producer stores
 * them: `event_type=bar_1m` on SSE (resumed from 0: exactly the stored BTC 1-minute bars, then a
 * new one live, each with its DERIVED `seq`), gRPC StreamEvents (`bar` messages field for field)
 * and disk-sync (`book_snapshot_10_1s`); the default selection never carries them; derived kinds
 * mixed with trades, on the bidirectional Stream or in a JSON-RPC filter are refused; and
 * `md_ohlcv` returns the bars whose start lies in the range, oldest first.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BarEvent, type BookSnapshotEvent, derivedStartMs } from '../../contracts/derived.ts';
import { derivedSubject } from '../../contracts/subjects.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectSync, type SyncClient, startGuardedDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { keyMetadata, type PriceClient, priceClient, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { call, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { openSse } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let sse: TestGateway;
let grpc: TestGrpc;
let rpc: TestJsonRpc;
let client: PriceClient;
let disk: { address: string; stop(): Promise<void> };
let key = '';
const syncs: SyncClient[] = [];
const T0 = 1_767_225_600_000;

function bar(symbol: string, kind: 'bar_1m' | 'bar_1s', i: number): BarEvent {
  const span = kind === 'bar_1m' ? 60_000 : 1_000;
  const start = T0 + i * span;
  return {
    event_type: kind,
    source: 'synthetic',
    symbol,
    start_ms: start,
    end_ms: start + span,
    open: 100 + i,
    high: 110 + i,
    low: 90 + i,
    close: 105 + i,
    volume: 3,
    notional: 300 + 3 * i,
    trade_count: 3,
    vwap: 100 + i,
    first_seq: 10 * i + 1,
    last_seq: 10 * i + 3,
    timestamp_ms: start + span,
  };
}

const snapshot = (i: number): BookSnapshotEvent => ({
  event_type: 'book_snapshot_10_1s',
  source: 'synthetic',
  symbol: 'BTC',
  timestamp_ms: T0 + (i + 1) * 1_000,
  bids: [{ price: 99 + i, size: 1 }],
  asks: [{ price: 101 + i, size: 2 }],
  best_bid: 99 + i,
  best_ask: 101 + i,
  mid_price: 100 + i,
  base_seq: 1,
  last_seq: i + 1,
});

/** Stores derived events as the producer does (one subject per series); their DERIVED sequences. */
async function storeDerived(events: (BarEvent | BookSnapshotEvent)[]): Promise<number[]> {
  const seqs: number[] = [];
  for (const e of events) {
    const ack = await stack.nats.js.publish(
      derivedSubject(e.source, e.symbol, e.event_type),
      JSON.stringify(e),
      {
        msgID: `${e.event_type}.${e.source}.${e.symbol}.${derivedStartMs(e)}`,
      },
    );
    seqs.push(ack.seq);
  }
  return seqs;
}

let stored: { seq: number; e: BarEvent | BookSnapshotEvent }[] = [];

beforeAll(async () => {
  stack = await startStack();
  const log = createLogger(stack.config.LOG_LEVEL, 'derived');
  sse = await startTestGateway(stack.server.url, {}, { guard: 'keys' });
  grpc = await startTestGrpc(stack.nats, stack.config);
  client = priceClient(grpc.target);
  rpc = await startTestJsonRpc(stack.nats, stack.config);
  disk = await startGuardedDisksync(stack.nats, stack.config, log);
  key = (await stack.accounts.key('quant')).key;
  await publishNow(stack.nats.js, [trade('BTC', 1), trade('ETH', 2)]);
  const events = [
    ...Array.from({ length: 6 }, (_, i) => bar('BTC', 'bar_1m', i)),
    ...Array.from({ length: 4 }, (_, i) => bar('ETH', 'bar_1m', i)),
    ...Array.from({ length: 5 }, (_, i) => bar('BTC', 'bar_1s', i)),
    ...Array.from({ length: 3 }, (_, i) => snapshot(i)),
  ];
  const seqs = await storeDerived(events);
  stored = events.map((e, i) => ({ seq: seqs[i] as number, e }));
}, 60_000);

afterAll(async () => {
  for (const c of syncs) c.ws.terminate();
  client?.close();
  await disk?.stop();
  await rpc?.close();
  await grpc?.close();
  await sse?.close();
  await stack?.close();
});

const btc1m = () => stored.filter((s) => s.e.symbol === 'BTC' && s.e.event_type === 'bar_1m');

describe('derived series on the streaming transports', () => {
  it('SSE: event_type=bar_1m resumes from the DERIVED stream exactly, then goes live', async () => {
    const got: { id: number; data: Record<string, unknown> }[] = [];
    const s = await openSse(
      `${sse.url}/api/v1/unified/stream?coin=BTC&event_type=bar_1m`,
      (m) => {
        if (m.event === 'message') got.push({ id: Number(m.id), data: JSON.parse(m.data) });
      },
      { 'x-api-key': key, 'last-event-id': '0' },
    );
    expect(s.status).toBe(200);
    await eventually(() => got.length >= btc1m().length, 10_000, 'the stored bars');
    expect(got.map((g) => g.id)).toEqual(btc1m().map((b) => b.seq));
    expect(got[0]?.data).toEqual({ seq: btc1m()[0]?.seq, ...btc1m()[0]?.e });
    const [next] = await storeDerived([bar('BTC', 'bar_1m', 6)]);
    await eventually(() => got.at(-1)?.id === next, 10_000, 'the live bar');
    s.abort();
  });

  it('SSE: the default selection never carries derived series', async () => {
    const got: string[] = [];
    const s = await openSse(
      `${sse.url}/api/v1/unified/stream?coin=BTC`,
      (m) => {
        if (m.event === 'message') got.push(JSON.parse(m.data).event_type);
      },
      { 'x-api-key': key, 'last-event-id': '0' },
    );
    await eventually(() => got.length >= 1, 10_000, 'the stored trade');
    await storeDerived([bar('BTC', 'bar_1m', 7)]);
    await publishNow(stack.nats.js, [trade('BTC', 3)]);
    await eventually(() => got.length >= 2, 10_000, 'the live trade');
    expect(got).toEqual(['trade', 'trade']);
    s.abort();
  });

  it('gRPC StreamEvents: bar messages, field for field', async () => {
    const messages: Record<string, unknown>[] = [];
    const c = client.StreamEvents(
      { coins: ['ETH'], event_types: ['bar_1m'], after_seq: 0 },
      keyMetadata(key),
    ) as ClientReadableStream<Record<string, unknown>>;
    c.on('data', (m) => messages.push(m));
    c.on('error', () => {});
    const eth = stored.filter((s) => s.e.symbol === 'ETH');
    await eventually(() => messages.filter((m) => m.bar).length >= eth.length, 10_000, 'the ETH bars');
    const bars = messages.filter((m) => m.bar).map((m) => m.bar);
    expect(bars).toEqual(eth.map((s) => ({ seq: s.seq, ...s.e })));
    c.cancel();
  });

  it('disk-sync: book_snapshot_10_1s from from_seq 0', async () => {
    const c = connectSync(disk.address, { key });
    syncs.push(c);
    c.send({ op: 'subscribe', id: 'snap', event_types: ['book_snapshot_10_1s'], from_seq: 0 });
    await c.control('caught_up');
    const snaps = stored.filter((s) => s.e.event_type === 'book_snapshot_10_1s');
    expect(c.events).toEqual(snaps.map((s) => ({ seq: s.seq, ...s.e })));
  });

  it('refuses derived kinds mixed with trades, on the bidirectional Stream and in a filter', async () => {
    const mixed = await fetch(`${sse.url}/api/v1/unified/stream?event_type=trade,bar_1m`, {
      headers: { 'x-api-key': key },
    });
    expect(mixed.status).toBe(400);
    expect(await mixed.text()).toContain('stream of their own');
    const bidi = client.Stream(keyMetadata(key));
    const status = new Promise<{ code: number; details: string }>((r) => bidi.on('status', r));
    bidi.on('error', () => {});
    bidi.write({ open: { event_types: ['bar_1m'] } });
    expect((await status).code).toBe(3);
    const filter = await call(rpc.url, 'md_newFilter', [{ event_types: ['bar_1m'] }]);
    expect(filter.error?.code).toBe(-32602);
  });
});

describe('md_ohlcv', () => {
  it('returns the bars whose start lies in [start_ms, end_ms), oldest first', async () => {
    const answer = await call(rpc.url, 'md_ohlcv', ['BTC', '1m', T0 + 60_000, T0 + 4 * 60_000]);
    const result = answer.result as { bars: Record<string, unknown>[]; truncated: boolean };
    const want = btc1m().filter((s) => {
      const start = (s.e as BarEvent).start_ms;
      return start >= T0 + 60_000 && start < T0 + 4 * 60_000;
    });
    expect(want.length).toBe(3);
    expect(result.truncated).toBe(false);
    expect(result.bars).toEqual(want.map((s) => ({ seq: s.seq, ...s.e })));
    const bad = await call(rpc.url, 'md_ohlcv', ['BTC', '1m', T0 + 60_000, T0]);
    expect(bad.error?.code).toBe(-32008);
  });

  it('gRPC GetBars answers the same bars', async () => {
    const answer = await new Promise<{ bars: Record<string, unknown>[]; truncated: boolean }>(
      (resolve, reject) =>
        client.GetBars(
          {
            coin: 'BTC',
            interval: '1m',
            start_ms: T0 + 60_000,
            end_ms: T0 + 4 * 60_000,
            source: 'synthetic',
          },
          keyMetadata(key),
          (err: Error | null, v: { bars: Record<string, unknown>[]; truncated: boolean }) =>
            err ? reject(err) : resolve(v),
        ),
    );
    const rpcAnswer = await call(rpc.url, 'md_ohlcv', [
      'BTC',
      '1m',
      T0 + 60_000,
      T0 + 4 * 60_000,
      'synthetic',
    ]);
    const bars = (rpcAnswer.result as { bars: Record<string, unknown>[] }).bars;
    expect(bars.length).toBe(3);
    expect(answer.truncated).toBe(false);
    expect(answer.bars).toEqual(bars);
    const bad = await new Promise<{ code: number }>((resolve) =>
      client.GetBars(
        { coin: 'BTC', interval: '5m', start_ms: 0, end_ms: 1 },
        keyMetadata(key),
        (err: { code: number }) => resolve(err),
      ),
    );
    expect(bad.code).toBe(3);
  });
});
