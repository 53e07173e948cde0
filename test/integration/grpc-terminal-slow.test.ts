/**
 * How a gRPC stream that the edge ends for being slow ends on a real grpc-js client, and what the
 * client keeps from it (the buffered sink's policy: books conflated, `upstream_lag`, then the
 * terminal `reconnect`; after SSE_CLOSE_GRACE_MS the wire is reset):
 * - a client still paused when the close grace passes cannot get the status (its trailers wait
 *   behind data that flow control holds), so the edge resets the stream: the client sees
 *   CANCELLED while still paused, without trailers, for StreamEvents and the bidirectional Stream;
 * - a client that reads again, slowly, within the grace gets UNAVAILABLE with `x-error-code`
 *   reconnect; whether the messages written just before that status (the `upstream_lag` warning
 *   among them) reach it depends on how far behind it reads (grpc-js discards what it had not
 *   handed to the reader when a non-OK status arrives, see grpc-terminal-client-drop.test.ts);
 * in both cases what the client got is an exact prefix of the stream (increasing, no trade
 * missing from the first event on; only books may be conflated), and `after_seq` = its last
 * sequence resumes it to the end.
 */
import { type ClientReadableStream, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireTail, type TailHold } from '../../app/shared-tail.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { seqRange } from '../support/cluster.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, seqsOf, trailers } from '../support/grpc.ts';
import { type InProcessGrpc, ownConnectionClient, startInProcessGrpc } from '../support/grpc-edge.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const MAX_BACKLOG = 64 * 1024;
const SHORT_GRACE_MS = 500;
const config = testConfig({ SSE_MAX_BACKLOG_BYTES: String(MAX_BACKLOG) });
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
/** An edge whose close grace passes while the paused client still does not read. */
let shortGrace: InProcessGrpc;
/** An edge whose close grace outlasts the test (the client reads again within it). */
let longGrace: InProcessGrpc;
/** The process's live tail, which both edges read: how far they have taken the published events. */
let tail: TailHold;
const clients: PriceClient[] = [];
let key: string;

type Msg = Record<string, unknown>;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  shortGrace = await startInProcessGrpc(nats, { ...config, SSE_CLOSE_GRACE_MS: SHORT_GRACE_MS });
  longGrace = await startInProcessGrpc(nats, { ...config, SSE_CLOSE_GRACE_MS: 600_000 });
  tail = await acquireTail(nats, config, createLogger('silent'));
  key = (await accounts.key('quant')).key;
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await shortGrace?.close();
  await longGrace?.close();
  tail?.release();
  await base?.close();
});

/** A stream from `after_seq`, on a connection of its own, paused from the start. */
function pausedStream(edge: InProcessGrpc, method: 'StreamEvents' | 'Stream', afterSeq: number) {
  const client = ownConnectionClient(edge.target);
  clients.push(client);
  const call: ClientReadableStream<Msg> =
    method === 'StreamEvents'
      ? client.StreamEvents({ after_seq: afterSeq }, keyMetadata(key))
      : client.Stream(keyMetadata(key));
  if (method === 'Stream')
    (call as unknown as { write(m: Msg): void }).write({ open: { after_seq: afterSeq } });
  const got = collect(call);
  call.pause();
  let status: { err: ServiceError | null } | null = null;
  void got.ended.then((err) => {
    status = { err };
  });
  // grpc-js emits the status before the messages its Readable still holds: they follow, then `end`.
  let drained = false;
  call.once('end', () => {
    drained = true;
  });
  /** Once the client's Readable has handed over every message it will (after the status). */
  const drainedAll = () => eventually(() => drained, 20_000, 'the messages held before the status');
  return { call, got, drainedAll, status: () => status };
}

/** Publishes books and trades in batches until the edge has ended every stream it holds. */
async function publishUntilEnded(edge: InProcessGrpc): Promise<number> {
  await eventually(() => edge.app.registry.size === 1, 10_000, 'the stream registered');
  const deadline = Date.now() + 60_000;
  for (let i = 0; edge.app.registry.size > 0; i += 200) {
    if (Date.now() > deadline) throw new Error('the paused stream was not ended by the edge within 60 s');
    const events = Array.from({ length: 200 }, (_, k) => {
      const n = i + k;
      return n % 4 === 0 ? book(n % 8 < 4 ? 'BTC' : 'ETH', n, 10) : trade(n % 2 ? 'ETH' : 'BTC', n);
    });
    await publishNow(nats.js, events);
    // The next batch once the edges have these (a loaded machine must not let publishing run ahead).
    const published = await lastSeq(nats);
    await eventually(() => tail.tail.lastSeq >= published, 20_000, `the tail reaching ${published}`);
  }
  return lastSeq(nats);
}

/** The messages of StreamEvents from `after` to `end` on `edge`, read by a client that keeps up. */
async function readTo(edge: InProcessGrpc, after: number, end: number): Promise<Msg[]> {
  const client = ownConnectionClient(edge.target);
  clients.push(client);
  const got = collect(client.StreamEvents({ after_seq: after }, keyMetadata(key)));
  await eventually(() => after === end || seqsOf(got.messages).at(-1) === end, 20_000, `reading to ${end}`);
  got.call.cancel();
  // The next test counts this edge's streams from none.
  await eventually(() => edge.app.registry.size === 0, 10_000, 'the reader released');
  return got.messages;
}

const typeOf = (m: Msg): [number, string][] =>
  m.trade
    ? [[(m.trade as { seq: number }).seq, 'trade']]
    : m.book
      ? [[(m.book as { seq: number }).seq, 'book']]
      : [];

/**
 * What the client got is an exact prefix of the stream from `from`: increasing, starting at the
 * first event, no trade missing (books may be conflated); and `after_seq` = its last sequence
 * resumes it to `end` with nothing missing or repeated.
 */
async function expectResumablePrefix(edge: InProcessGrpc, messages: Msg[], from: number, end: number) {
  const got = seqsOf(messages);
  const types = new Map((await readTo(edge, from, end)).flatMap(typeOf));
  expect([...types.keys()]).toEqual(seqRange(from, end));
  expect(got.length).toBeGreaterThan(0);
  expect(got[0]).toBe(from + 1);
  expect([...got].sort((a, b) => a - b)).toEqual([...new Set(got)]);
  const last = got.at(-1) as number;
  const tradesUpTo = seqRange(from, last).filter((s) => types.get(s) === 'trade');
  expect(got.filter((s) => types.get(s) === 'trade')).toEqual(tradesUpTo);
  for (const m of messages.filter((x) => x.warning))
    expect(['upstream_lag', 'feed_stale']).toContain((m.warning as { code: string }).code);
  expect(seqsOf(await readTo(edge, last, end))).toEqual(seqRange(last, end));
}

describe('a client paused past the close grace', () => {
  for (const method of ['StreamEvents', 'Stream'] as const) {
    it(`${method}: sees CANCELLED from the reset while still paused, then resumes from its prefix`, async () => {
      const from = await lastSeq(nats);
      const s = pausedStream(shortGrace, method, from);
      const end = await publishUntilEnded(shortGrace);

      // Still paused: the status is the reset's, so it does not wait for the client to read.
      const ended = await eventually(s.status, SHORT_GRACE_MS + 15_000, 'a status on the paused client');
      expect(ended.err?.code).toBe(status.CANCELLED);
      expect(trailers(ended.err ?? undefined)['x-error-code']).toBeUndefined();

      s.call.resume();
      await s.drainedAll();
      await expectResumablePrefix(shortGrace, s.got.messages, from, end);
    }, 120_000);
  }
});

it('a client reading slowly again within the grace gets UNAVAILABLE (reconnect) after an exact, resumable prefix', async () => {
  const from = await lastSeq(nats);
  const s = pausedStream(longGrace, 'StreamEvents', from);
  const end = await publishUntilEnded(longGrace);

  // Reads again, one message per timer turn: the edge's writes (and then its status) follow.
  s.call.on('data', () => {
    s.call.pause();
    setTimeout(() => s.call.resume(), 1);
  });
  s.call.resume();
  const ended = await eventually(s.status, 60_000, 'the status of the slow reader');
  expect(ended.err?.code).toBe(status.UNAVAILABLE);
  expect(trailers(ended.err ?? undefined)['x-error-code']).toBe('reconnect');
  await s.drainedAll();
  await expectResumablePrefix(longGrace, s.got.messages, from, end);
}, 120_000);
