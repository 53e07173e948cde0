/**
 * A record in the `MD` log that is not a valid event (bytes that look like a JSON object to the
 * readers, `{` … `}`, but do not parse), published with a plain NATS client onto a trade subject
 * of BTC: the gRPC edge cannot build a message from it, and it holds no market data. With a real
 * grpc-js client, every stream that selects it gets a `record_skipped` notice in its place, in
 * order, with its sequence as `resumed_after`, and goes on: live, resumed from the ring, resumed
 * from the stream (older than the ring) and on the bidirectional Stream. Never a silent gap, and
 * never a stream that ends at the same record on every resume. An ETH stream is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mdSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { type Collected, collect, keyMetadata, type PriceClient, seqsOf, unary } from '../support/grpc.ts';
import { type GrpcStack, startGrpcStack } from '../support/grpc-stack.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { lastSeq } from '../support/stored-seqs.ts';

/** A small ring, so a resume from before the record reads it from the stream, not from memory. */
const config = testConfig({ SSE_RING_SIZE: '16' });
let nats: Nats;
let client: PriceClient;
let key: string;

const CORRUPT = new TextEncoder().encode('{"event_type":"trade", this is not JSON}');

/** Publishes alternating BTC and ETH trades; resolves with their sequences by coin. */
async function publishTrades(n: number, base: number): Promise<{ BTC: number[]; ETH: number[] }> {
  const from = await lastSeq(nats);
  await publishNow(
    nats.js,
    Array.from({ length: n }, (_, i) => trade(i % 2 ? 'ETH' : 'BTC', base + i)),
  );
  const seqs = Array.from({ length: n }, (_, i) => from + 1 + i);
  return { BTC: seqs.filter((_, i) => i % 2 === 0), ETH: seqs.filter((_, i) => i % 2 === 1) };
}

type Message = Collected['messages'][number];

/** What the stream delivered, in order: `E<seq>` per event, `skipped<seq>` per record_skipped notice. */
const delivered = (s: Collected): string[] =>
  s.messages.flatMap((m: Message) => {
    const notice = m.notice as { code?: string; resumed_after?: number } | undefined;
    if (notice?.code === 'record_skipped') return [`skipped${notice.resumed_after}`];
    const seq = seqsOf([m])[0];
    return seq === undefined ? [] : [`E${seq}`];
  });

/** Waits until `s` has delivered `expected` (at least), then checks it delivered exactly that, in order. */
async function expectDelivered(s: Collected, expected: string[], what: string): Promise<void> {
  await eventually(() => delivered(s).length >= expected.length, 15_000, what);
  expect(delivered(s)).toEqual(expected);
}

let stack: GrpcStack;

beforeAll(async () => {
  stack = await startGrpcStack(config, 'quant');
  ({ nats, client, key } = stack);
}, 60_000);

afterAll(async () => {
  await stack?.close();
});

describe('a record in the log that is not a valid event', () => {
  it('is skipped with a record_skipped notice in its place on every stream that selects it; the others never see it', async () => {
    const from = await lastSeq(nats);
    const live = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key)));
    const eth = collect(client.StreamEvents({ coins: ['ETH'] }, keyMetadata(key)));
    await Promise.all([live, eth].map((s) => new Promise((r) => s.call.once('metadata', r))));

    const before = await publishTrades(10, 0);
    await eventually(() => seqsOf(live.messages).length === before.BTC.length, 10_000, 'BTC before');
    const corrupt = (await nats.js.publish(mdSubject('synthetic', 'BTC', 'trade'), CORRUPT)).seq;
    const after = await publishTrades(40, 100);
    const end = await lastSeq(nats);
    const E = (seqs: number[]) => seqs.map((q) => `E${q}`);
    const btc = [...E(before.BTC), `skipped${corrupt}`, ...E(after.BTC)];

    await expectDelivered(live, btc, 'the live BTC stream past the record');
    // Resumed from just before the record, read from the live tail's ring: 2 ETH/BTC events, the
    // record, then everything after it.
    const all = collect(client.StreamEvents({ after_seq: corrupt - 3 }, keyMetadata(key)));
    const tail = [corrupt - 2, corrupt - 1].map((q) => `E${q}`);
    const rest = Array.from({ length: end - corrupt }, (_, i) => `E${corrupt + 1 + i}`);
    await expectDelivered(all, [...tail, `skipped${corrupt}`, ...rest], 'a resume from the ring');
    // Resumed from before the record, now older than the ring (16 events): read from the stream …
    const fromStream = collect(client.StreamEvents({ coins: ['BTC'], after_seq: from }, keyMetadata(key)));
    await expectDelivered(fromStream, btc, 'a resume from the stream');
    // … and on the bidirectional Stream.
    const bidiCall = client.Stream(keyMetadata(key));
    const bidi = collect(bidiCall);
    bidiCall.write({ open: { coins: ['BTC'], after_seq: from } });
    await expectDelivered(bidi, btc, 'the bidirectional stream');

    // The ETH stream on the same edge: every ETH event, no notice.
    await expectDelivered(eth, E([...before.ETH, ...after.ETH]), 'every ETH event');
    for (const s of [live, all, fromStream, bidi, eth]) {
      expect(await Promise.race([s.ended.then(() => 'ended'), Promise.resolve('open')])).toBe('open');
      s.call.cancel();
    }
    // The process serves on.
    expect((await unary(client, 'GetBlockNumber', {}, keyMetadata(key))).value?.number).toBe(end);
  });
});
