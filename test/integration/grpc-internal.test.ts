/**
 * INTERNAL on the gRPC edge, from an honest trigger: a record in the `MD` log that is not a valid
 * event (bytes that look like a JSON object to the readers, `{` … `}`, but do not parse), published
 * with a plain NATS client onto a trade subject of BTC. With a real grpc-js client:
 * - a live StreamEvents of BTC ends with INTERNAL (`x-error-code` internal, no hang), after every
 *   BTC event before the record (a `warning` naming the record's sequence precedes the status; a
 *   grpc-js client may drop it, as it drops unread messages once a non-OK status arrives);
 * - a StreamEvents resumed from before the record, read from the stream (older than the live
 *   tail's ring) and from the ring, and the bidirectional Stream, end the same way, having
 *   delivered a gapless prefix of the events before the record (none if it failed while opening);
 * - resuming with `after_seq` = that sequence goes on past it to the end;
 * - a stream of ETH on the same edge is untouched and receives every ETH event, and the process
 *   goes on serving new calls.
 */
import { type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mdSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import {
  type Collected,
  collect,
  keyMetadata,
  type PriceClient,
  priceClient,
  seqsOf,
  startTestGrpc,
  type TestGrpc,
  trailers,
  unary,
} from '../support/grpc.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishNow, trade } from '../support/publisher.ts';

/** A small ring, so a resume from before the record reads it from the stream, not from memory. */
const config = testConfig({ SSE_RING_SIZE: '16' });
let server: TestNats;
let nats: Nats;
let accounts: TestAccounts;
let edge: TestGrpc;
let client: PriceClient;
let key: string;

const lastSeq = async () => (await nats.jsm.streams.info('MD')).state.last_seq;
const CORRUPT = new TextEncoder().encode('{"event_type":"trade", this is not JSON}');

/** Publishes alternating BTC and ETH trades; resolves with their sequences by coin. */
async function publishTrades(n: number, base: number): Promise<{ BTC: number[]; ETH: number[] }> {
  const from = await lastSeq();
  await publishNow(
    nats.js,
    Array.from({ length: n }, (_, i) => trade(i % 2 ? 'ETH' : 'BTC', base + i)),
  );
  const seqs = Array.from({ length: n }, (_, i) => from + 1 + i);
  return { BTC: seqs.filter((_, i) => i % 2 === 0), ETH: seqs.filter((_, i) => i % 2 === 1) };
}

/**
 * The stream ended with INTERNAL; what it delivered is a gapless prefix of `expected`. The
 * `warning` naming the record's sequence is written right before the status, but a grpc-js client
 * drops messages not yet handed to the reader when a non-OK status arrives: if it came, it is last.
 */
async function expectInternalAt(s: Collected, seq: number, expected: number[]): Promise<number[]> {
  let ended: { err: ServiceError | null } | null = null;
  void s.ended.then((err) => {
    ended = { err };
  });
  const { err } = await eventually(() => ended, 15_000, 'the stream to end (not hang)');
  expect(err?.code, 'the stream must end with INTERNAL').toBe(status.INTERNAL);
  const t = trailers(err ?? undefined);
  expect(t['x-error-code']).toBe('internal');
  expect(t['x-request-id']).toMatch(/^req_/);
  expect(err?.details).toBeTruthy();
  const seqs = seqsOf(s.messages);
  expect(seqs).toEqual(expected.slice(0, seqs.length));
  const warnings = s.messages.filter((m) => m.warning);
  if (warnings.length > 0) {
    expect(warnings).toHaveLength(1);
    expect(s.messages.at(-1)).toBe(warnings[0]);
    const w = warnings[0]?.warning as { code: string; message: string };
    expect(w.code).toBe('internal');
    expect(w.message).toContain(`after_seq ${seq}`);
  }
  return seqs;
}

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  accounts = await startTestAccounts(nats, config);
  edge = await startTestGrpc(nats, config);
  client = priceClient(edge.target);
  key = (await accounts.key('quant')).key;
}, 60_000);

afterAll(async () => {
  client?.close();
  await edge?.close();
  accounts?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

describe('an event in the log that cannot be decoded', () => {
  it('ends the streams that select it with INTERNAL, leaves the others alone, and can be resumed past', async () => {
    const from = await lastSeq();
    const live = collect(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(key)));
    const eth = collect(client.StreamEvents({ coins: ['ETH'] }, keyMetadata(key)));
    await Promise.all([live, eth].map((s) => new Promise((r) => s.call.once('metadata', r))));

    const before = await publishTrades(10, 0);
    await eventually(() => seqsOf(live.messages).length === before.BTC.length, 10_000, 'BTC before');
    const corrupt = (await nats.js.publish(mdSubject('synthetic', 'BTC', 'trade'), CORRUPT)).seq;

    // The live BTC stream: every BTC event before the record, then the warning, then INTERNAL.
    expect(await expectInternalAt(live, corrupt, before.BTC)).toEqual(before.BTC);
    // Resumed from just before the record, read from the live tail's ring.
    const fromRing = collect(client.StreamEvents({ after_seq: corrupt - 3 }, keyMetadata(key)));
    await expectInternalAt(fromRing, corrupt, [corrupt - 2, corrupt - 1]);

    const after = await publishTrades(40, 100);
    const end = await lastSeq();
    // The ETH stream on the same edge: untouched, every ETH event.
    const ethAll = [...before.ETH, ...after.ETH];
    await eventually(() => seqsOf(eth.messages).at(-1) === ethAll.at(-1), 10_000, 'every ETH event');
    expect(seqsOf(eth.messages)).toEqual(ethAll);
    expect(await Promise.race([eth.ended.then(() => 'ended'), Promise.resolve('open')])).toBe('open');
    eth.call.cancel();

    // Resumed from before the record, now older than the ring (16 events): read from the stream …
    const fromStream = collect(client.StreamEvents({ coins: ['BTC'], after_seq: from }, keyMetadata(key)));
    await expectInternalAt(fromStream, corrupt, before.BTC);
    // … and on the bidirectional Stream.
    const bidiCall = client.Stream(keyMetadata(key));
    const bidi = collect(bidiCall);
    bidiCall.write({ open: { coins: ['BTC'], after_seq: from } });
    await expectInternalAt(bidi, corrupt, before.BTC);

    // Resuming past the record, as the warning says, goes on to the end.
    const past = collect(client.StreamEvents({ coins: ['BTC'], after_seq: corrupt }, keyMetadata(key)));
    await eventually(() => seqsOf(past.messages).at(-1) === after.BTC.at(-1), 10_000, 'BTC after the record');
    expect(seqsOf(past.messages)).toEqual(after.BTC);
    past.call.cancel();

    // The process serves on.
    expect((await unary(client, 'GetBlockNumber', {}, keyMetadata(key))).value?.number).toBe(end);
  });
});
