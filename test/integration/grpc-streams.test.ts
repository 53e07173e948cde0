/**
 * The gRPC edge's streams on the core data plane, with a real grpc-js client from the proto:
 * - StreamEvents resumed with `after_seq` after random cuts while events are published: the union
 *   of what was received is exactly the published range, nothing twice;
 * - a position beyond the end is said in-band (notice), an unknown coin is a warning and the
 *   stream goes on for the others;
 * - the bidirectional Stream: open first (anything else is INVALID_ARGUMENT), ping → pong,
 *   subscribe / unsubscribe, and after an UNAVAILABLE (its gateway shut down) an exact resume on
 *   another gateway;
 * - StreamMids: one MidPriceResponse per book.
 */
import { type ClientDuplexStream, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { seqRange } from '../support/cluster.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import {
  collect,
  keyMetadata,
  type PriceClient,
  priceClient,
  seqsOf,
  startTestGrpc,
  type TestGrpc,
  trailers,
} from '../support/grpc.ts';
import { publishAtRate } from '../support/publisher.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq, storedSeqs } from '../support/stored-seqs.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edges: TestGrpc[];
let clients: PriceClient[];
let key: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  edges = await Promise.all([startTestGrpc(nats, config), startTestGrpc(nats, config)]);
  clients = edges.map((e) => priceClient(e.target));
  key = (await accounts.key('quant')).key;
}, 60_000);

afterAll(async () => {
  for (const c of clients ?? []) c.close();
  for (const e of edges ?? []) await e.close();
  await base?.close();
});

describe('StreamEvents', () => {
  it('resumes exactly after random cuts: the union is the published range, nothing twice', async () => {
    const { random } = seededRandom('StreamEvents cuts');
    const from = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH', 'SOL'], 400, { booksEvery: 4 });
    const received: number[] = [];
    let after = from;
    let cuts = 0;
    let end = Number.POSITIVE_INFINITY;
    while (after < end) {
      const take = 5 + Math.floor(random() * 60);
      const s = collect(clients[cuts % 2]?.StreamEvents({ after_seq: after }, keyMetadata(key)));
      await eventually(
        () => seqsOf(s.messages).length >= take || (end !== Infinity && seqsOf(s.messages).at(-1) === end),
        10_000,
        'events',
      );
      s.call.cancel();
      await s.ended;
      const seqs = seqsOf(s.messages);
      received.push(...seqs);
      after = seqs.at(-1) ?? after;
      cuts++;
      if (cuts === 8) {
        await publisher.stop();
        end = await lastSeq(nats);
      }
    }
    expect(cuts).toBeGreaterThanOrEqual(8);
    expect(received).toEqual(seqRange(from, end));
  });

  it('streams of one selection on one edge (sharing encoded chunks) each get every event, in order', async () => {
    const from = await lastSeq(nats);
    const streams = [0, 1, 2].map(() =>
      collect(clients[0]?.StreamEvents({ coins: ['BTC'], after_seq: from }, keyMetadata(key))),
    );
    await Promise.all(streams.map((s) => new Promise((r) => s.call.once('metadata', r))));
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 500, { booksEvery: 3 });
    await eventually(
      () => streams.every((s) => seqsOf(s.messages).length >= 60),
      20_000,
      '60 BTC events each',
    );
    await publisher.stop();
    const end = await lastSeq(nats);
    const btc = (await nats.jsm.streams.getMessage('MD', { last_by_subj: 'md.*.BTC.*' }))?.seq;
    await eventually(
      () => streams.every((s) => seqsOf(s.messages).at(-1) === btc),
      20_000,
      'the last BTC event',
    );
    // Each stream against what the log stores (not against each other: a chunk shared wrongly
    // would be wrong in all of them alike).
    const stored = await storedSeqs(nats, 'MD', 'md.*.BTC.*', from, btc as number);
    expect(stored.length).toBeGreaterThanOrEqual(60);
    expect(stored.every((q) => q > from && q <= end)).toBe(true);
    for (const s of streams) {
      expect(seqsOf(s.messages)).toEqual(stored);
      s.call.cancel();
    }
  });

  it('says a position beyond the end in-band, and warns of an unknown coin while serving the others', async () => {
    const last = await lastSeq(nats);
    const s = collect(
      clients[0]?.StreamEvents({ coins: ['BTC', 'NOPE'], after_seq: last + 1_000 }, keyMetadata(key)),
    );
    await eventually(() => s.messages.length >= 2);
    const notice = s.messages.find((m) => m.notice)?.notice as Record<string, unknown>;
    expect(notice).toMatchObject({
      code: 'position_beyond_end',
      requested_last_event_id: last + 1_000,
      resumed_after: last,
    });
    const warning = s.messages.find((m) => m.warning)?.warning as Record<string, unknown>;
    expect(warning).toMatchObject({ code: 'coin_not_found', coin: 'NOPE' });
    expect(warning.request_id).toMatch(/^req_/);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200);
    await eventually(() => seqsOf(s.messages).length >= 3);
    await publisher.stop();
    expect(
      s.messages.filter((m) => m.trade).every((m) => (m.trade as { symbol: string }).symbol === 'BTC'),
    ).toBe(true);
    s.call.cancel();
  });
});

/** The messages of a batched stream as a stream without `batch` gives them. */
const unbatched = (messages: Record<string, unknown>[]): Record<string, unknown>[] =>
  messages.flatMap((m) => (m.batch ? (m.batch as { messages: Record<string, unknown>[] }).messages : [m]));

describe('batch: true', () => {
  it('gives the same messages, in order, several to a FeedMessage.batch where the server had them together', async () => {
    const from = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 2_000, { booksEvery: 3 });
    await eventually(async () => (await lastSeq(nats)) >= from + 1_500, 20_000, '1,500 events stored');
    await publisher.stop();
    const end = await lastSeq(nats);
    const read = (batch: boolean) => {
      const s = collect(clients[1]?.StreamEvents({ after_seq: from, batch }, keyMetadata(key)));
      return { s, events: () => seqsOf(unbatched(s.messages)) };
    };
    const plain = read(false);
    const batched = read(true);
    for (const r of [plain, batched])
      await eventually(() => r.events().at(-1) === end, 20_000, 'the last event');
    expect(batched.events()).toEqual(seqRange(from, end));
    expect(unbatched(batched.s.messages)).toEqual(plain.s.messages);
    const sizes = batched.s.messages.map(
      (m) => (m.batch as { messages: unknown[] } | undefined)?.messages.length ?? 1,
    );
    expect(Math.max(...sizes)).toBeGreaterThan(1);
    expect(plain.s.messages.some((m) => m.batch)).toBe(false);
    for (const r of [plain, batched]) r.s.call.cancel();
  });

  it('applies to the bidirectional stream when its open asks for it', async () => {
    const from = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC'], 1_000);
    await eventually(async () => (await lastSeq(nats)) >= from + 300, 20_000, '300 events stored');
    await publisher.stop();
    const end = await lastSeq(nats);
    const call = clients[0]?.Stream(keyMetadata(key)) as unknown as ClientDuplexStream<
      unknown,
      Record<string, unknown>
    >;
    const messages: Record<string, unknown>[] = [];
    call.on('data', (m: Record<string, unknown>) => messages.push(m));
    call.on('error', () => {});
    call.write({ open: { after_seq: from, batch: true } });
    await eventually(() => seqsOf(unbatched(messages)).at(-1) === end, 20_000, 'the last event');
    expect(seqsOf(unbatched(messages))).toEqual(seqRange(from, end));
    expect(messages.some((m) => m.batch)).toBe(true);
    call.cancel();
  });
});

describe('Stream (bidirectional)', () => {
  const open = (i: number) => {
    const call = clients[i]?.Stream(keyMetadata(key));
    return { call, got: collect(call) };
  };

  it('refuses anything but open first with INVALID_ARGUMENT and no message', async () => {
    const { call, got } = open(0);
    call.write({ ping: { id: 'x' } });
    const err = await got.ended;
    expect(err?.code).toBe(status.INVALID_ARGUMENT);
    expect(trailers(err ?? undefined)['x-error-code']).toBe('invalid_params');
    expect(got.messages).toEqual([]);
  });

  it('answers ping with pong, and follows subscribe and unsubscribe', async () => {
    const { call, got } = open(0);
    call.write({ open: { coins: ['BTC'], event_types: ['trade'] } });
    call.write({ ping: { id: 'p1' } });
    await eventually(() => got.messages.some((m) => (m.pong as { id?: string })?.id === 'p1'));
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200);
    await eventually(() => got.messages.some((m) => m.trade));
    call.write({ subscribe: { coins: ['ETH'] } });
    await eventually(() => got.messages.some((m) => (m.trade as { symbol?: string })?.symbol === 'ETH'));
    call.write({ unsubscribe: { coins: ['BTC'] } });
    call.write({ ping: { id: 'p2' } });
    await eventually(() => got.messages.some((m) => (m.pong as { id?: string })?.id === 'p2'));
    const mark = got.messages.length;
    await eventually(() => got.messages.slice(mark).filter((m) => m.trade).length >= 5);
    await publisher.stop();
    const after = got.messages.slice(mark).filter((m) => m.trade);
    expect(after.every((m) => (m.trade as { symbol: string }).symbol === 'ETH')).toBe(true);
    const seqs = seqsOf(got.messages);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    call.end();
    call.cancel();
  });

  it('resumes exactly on another gateway after UNAVAILABLE', async () => {
    const extra = await startTestGrpc(nats, config);
    const doomed = priceClient(extra.target);
    const from = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 300);
    const first = doomed.Stream(keyMetadata(key));
    const a = collect(first);
    first.write({ open: { after_seq: from } });
    await eventually(() => seqsOf(a.messages).length >= 20);
    await extra.close();
    const err = await a.ended;
    expect(err?.code).toBe(status.UNAVAILABLE);
    expect(trailers(err ?? undefined)['x-error-code']).toBe('reconnect');
    doomed.close();
    const seen = seqsOf(a.messages);
    const second = clients[1]?.Stream(keyMetadata(key));
    const b = collect(second);
    second.write({ open: { after_seq: seen.at(-1) } });
    await eventually(() => seqsOf(b.messages).length >= 20);
    await publisher.stop();
    const end = await lastSeq(nats);
    await eventually(() => seqsOf(b.messages).at(-1) === end, 10_000, 'the last event');
    second.cancel();
    expect([...seen, ...seqsOf(b.messages)]).toEqual(seqRange(from, end));
  });
});

describe('StreamMids', () => {
  it('sends one MidPriceResponse per book of the coins asked for', async () => {
    const s = collect(clients[0]?.StreamMids({ coins: ['ETH'] }, keyMetadata(key)));
    await new Promise((r) => s.call.once('metadata', r));
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200, { booksEvery: 1 });
    await eventually(() => s.messages.length >= 5);
    await publisher.stop();
    s.call.cancel();
    for (const m of s.messages) {
      expect(m).toMatchObject({ coin: 'ETH', source: 'synthetic' });
      expect(m.price).toBeCloseTo(((m.best_bid as number) + (m.best_ask as number)) / 2);
    }
    const seqs = s.messages.map((m) => m.seq as number);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it('is NOT_FOUND for a coin the feed does not track', async () => {
    const s = collect(clients[0]?.StreamMids({ coins: ['ETH', 'NOPE'] }, keyMetadata(key)));
    expect((await s.ended)?.code).toBe(status.NOT_FOUND);
  });
});
