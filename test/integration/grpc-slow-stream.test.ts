/**
 * The slow-stream path of the gRPC edge, with real grpc-js clients each on its own HTTP/2
 * connection (flow control is per connection too), while events are published as fast as a
 * reading client takes them (in batches of 200, each once the fast client has the previous one):
 * - a StreamEvents client that stops reading is ended by the edge (the buffered sink's policy:
 *   books conflated, `upstream_lag` queued, then the terminal `reconnect`); once it reads again it
 *   gets UNAVAILABLE with `x-error-code` reconnect, after a prefix of the stream with no trade
 *   missing (only books may be conflated), from which it resumes with `after_seq` to the end
 *   without losing a trade;
 * - what the edge held for it (queued plus written-but-unsent bytes, the connection's high-water
 *   mark, kept at every change) went past the backlog bound (backpressure was reached) and never
 *   past SOCKET_BUFFER + 2 × (bound + one frame) + one frame;
 * - a fast client on the same edge meanwhile receives every sequence (it runs in a process of
 *   its own, test/support/grpc-stream-reader.ts, so that how fast it reads does not depend on the
 *   event loop it would otherwise share with the edge).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { type ClientReadableStream, type ServiceError, status } from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
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

const MAX_BACKLOG = 256 * 1024;
/** Events per published batch: the fast reader is never further behind than one (about 80 KB). */
const BATCH = 200;
/** Larger than any one message the publisher below makes (a 10-level book is about 600 bytes). */
const FRAME = 8 * 1024;
const config = testConfig({
  SSE_MAX_BACKLOG_BYTES: String(MAX_BACKLOG),
  // The slow client reads again well within this, so the status reaches it (see the report).
  SSE_CLOSE_GRACE_MS: '60000',
});
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let edge: InProcessGrpc;
const clients: PriceClient[] = [];
const children: ChildProcess[] = [];
let key: string;

type Msg = Record<string, unknown>;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  edge = await startInProcessGrpc(nats, config);
  key = (await accounts.key('quant')).key;
}, 60_000);

afterAll(async () => {
  for (const child of children) {
    child.stdin?.end();
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  }
  for (const c of clients) c.close();
  await edge?.close();
  await base?.close();
});

function client(): PriceClient {
  const c = ownConnectionClient(edge.target);
  clients.push(c);
  return c;
}

/** StreamEvents read in a child process: the sequences it got, and its end status code. */
function fastReader(afterSeq: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/support/grpc-stream-reader.ts', edge.target, key, String(afterSeq)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(child);
  const state = {
    open: false,
    seqs: [] as number[],
    types: new Map<number, string>(),
    end: null as number | null,
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'open') state.open = true;
    else if (line.startsWith('end ')) state.end = Number(line.slice(4));
    else
      for (const s of line.split(' ')) {
        const seq = Number(s.slice(0, -1));
        state.seqs.push(seq);
        state.types.set(seq, s.endsWith('t') ? 'trade' : 'book');
      }
  });
  return state;
}

it('ends a stream that stopped reading with UNAVAILABLE, bounded, while a fast one gets everything', async () => {
  const from = await lastSeq(nats);
  const fast = fastReader(from);
  await eventually(() => fast.open, 60_000, 'the fast reader open');

  // The slow client takes its headers, then reads nothing: HTTP/2 flow control holds the edge.
  const slowCall: ClientReadableStream<Msg> = client().StreamEvents({ after_seq: from }, keyMetadata(key));
  const slow = collect(slowCall);
  slowCall.pause();
  await eventually(() => edge.app.registry.size === 2, 10_000, 'both streams registered');

  // Published as fast as the fast client reads: a batch, then wait until it has them all. So the
  // fast client is never more than a batch behind (whatever the machine's load), while the slow
  // one, which reads nothing, falls further behind with every batch until the edge ends it.
  const deadline = Date.now() + 60_000;
  let i = 0;
  let end = from;
  while (edge.app.registry.size === 2) {
    if (Date.now() > deadline) throw new Error('the slow stream was not ended by the edge within 60 s');
    const events = Array.from({ length: BATCH }, (_, k) => {
      const n = i + k;
      return n % 4 === 0 ? book(n % 8 < 4 ? 'BTC' : 'ETH', n, 10) : trade(n % 2 ? 'ETH' : 'BTC', n);
    });
    i += BATCH;
    await publishNow(nats.js, events);
    end = await lastSeq(nats);
    const target = end;
    await eventually(() => fast.seqs.at(-1) === target, 20_000, `the fast client reaching ${target}`);
  }

  await eventually(() => fast.seqs.at(-1) === end, 20_000, `the fast client reaching ${end}`);
  expect(edge.app.registry.size, 'the fast stream was ended').toBe(1);
  expect(fast.end).toBeNull();
  expect(fast.seqs).toEqual(seqRange(from, end));

  // The slow client reads again: what was sent before the status, then UNAVAILABLE (reconnect).
  slowCall.resume();
  let ended: { err: ServiceError | null } | null = null;
  void slow.ended.then((err) => {
    ended = { err };
  });
  const { err } = await eventually(() => ended, 20_000, 'the slow stream to end');
  expect(err?.code).toBe(status.UNAVAILABLE);
  expect(trailers(err ?? undefined)['x-error-code']).toBe('reconnect');

  // Its events: increasing, no trade missing between its first and last (books may be conflated).
  const got = seqsOf(slow.messages);
  expect(got.length).toBeGreaterThan(0);
  expect([...got].sort((a, b) => a - b)).toEqual([...new Set(got)]);
  const first = got[0] as number;
  const last = got.at(-1) as number;
  const trades = (lo: number, hi: number) =>
    seqRange(lo - 1, hi).filter((s) => fast.types.get(s) === 'trade');
  expect(got.filter((s) => fast.types.get(s) === 'trade')).toEqual(trades(first, last));
  expect(first).toBe(from + 1);
  // A warning, if the client got it before the status, is `upstream_lag`, after every event.
  const warnings = slow.messages.filter((m) => m.warning);
  for (const w of warnings) expect((w.warning as { code: string }).code).toBe('upstream_lag');
  if (warnings.length > 0) {
    // It came before the terminal status: book updates were conflated (some in its range missing).
    const books = (lo: number, hi: number) =>
      seqRange(lo - 1, hi).filter((s) => fast.types.get(s) === 'book');
    expect(got.filter((s) => fast.types.get(s) === 'book').length).toBeLessThan(books(first, last).length);
  }

  // Resumed with after_seq = the last event it got: every later event, to the end.
  const resumed = collect(client().StreamEvents({ after_seq: last }, keyMetadata(key)));
  await eventually(
    () => seqsOf(resumed.messages).at(-1) === end,
    20_000,
    'the resumed stream reaching the end',
  );
  expect(seqsOf(resumed.messages)).toEqual(seqRange(last, end));
  resumed.call.cancel();

  // What the edge held for the slow stream: past the bound (backpressure), never past the bound's limit.
  const highWater = edge.app.registry.maxHighWaterBytes();
  expect(highWater, 'the slow stream never reached backpressure').toBeGreaterThan(MAX_BACKLOG);
  expect(highWater).toBeLessThanOrEqual(SOCKET_BUFFER + 2 * (MAX_BACKLOG + FRAME) + FRAME);
}, 90_000);
