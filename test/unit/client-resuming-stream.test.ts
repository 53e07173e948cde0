/**
 * The client's one reconnecting loop (clients/typescript/src/resuming-stream.ts) over scripted
 * connections: each connection starts after the position, a sequence is yielded once however often
 * a server repeats it, a `position_*` notice moves the position, waits follow the backoff rule
 * (reset by an event), and a connection that ends for good ends the iterator with its error. Plus
 * the two transport tables it is fed by: gRPC FeedMessages and disk-sync close codes.
 */
import { expect, it } from 'vitest';
import { closeAction } from '../../clients/typescript/src/disk-closes.ts';
import { MdpError } from '../../clients/typescript/src/errors.ts';
import { itemOfFeedMessage } from '../../clients/typescript/src/grpc-messages.ts';
import {
  type Connect,
  type Ended,
  ResumingStream,
  type WireItem,
} from '../../clients/typescript/src/resuming-stream.ts';
import type { Position, StreamItem } from '../../clients/typescript/src/stream-types.ts';

const event = (seq: number): WireItem => ({
  type: 'event',
  seq,
  event: { seq, event_type: 'trade', symbol: 'BTC' } as never,
});
const lost: Ended = { retry: true, error: new MdpError('network_error', 'cut') };

/** Connections that yield the scripted items in turn, recording the position each started after. */
function scripted(script: { items: WireItem[]; end: Ended }[]): {
  connect: Connect;
  starts: (Position | null)[];
} {
  const starts: (Position | null)[] = [];
  const connect: Connect = async function* (position) {
    starts.push(position);
    const next = script[starts.length - 1];
    if (!next) return { retry: false, error: new MdpError('invalid_response', 'script over') };
    // Two batches (the first item alone, then the rest): batches must not matter.
    if (next.items.length > 0) yield next.items.slice(0, 1);
    if (next.items.length > 1) yield next.items.slice(1);
    return next.end;
  };
  return { connect, starts };
}

async function drain(s: ResumingStream): Promise<{ items: StreamItem[]; error: unknown }> {
  const items: StreamItem[] = [];
  try {
    for await (const i of s) items.push(i);
    return { items, error: null };
  } catch (error) {
    return { items, error };
  }
}

const seqs = (items: StreamItem[]) => items.flatMap((i) => (i.type === 'event' ? [i.seq] : []));

it('starts every connection after the position and yields a repeated sequence once', async () => {
  const { connect, starts } = scripted([
    { items: [event(1), event(2), event(3)], end: lost },
    { items: [event(2), event(3), event(4)], end: lost },
  ]);
  const s = new ResumingStream({ from: 0, retryMs: 1 }, connect);
  const { items, error } = await drain(s);
  expect(seqs(items)).toEqual([1, 2, 3, 4]);
  expect(starts).toEqual([0, 3, 4]);
  expect(s.position).toBe(4);
  expect(s.reconnects).toBe(2);
  expect(error).toMatchObject({ code: 'invalid_response' });
});

it('moves the position where a notice says the server resumed', async () => {
  const notice: WireItem = {
    type: 'notice',
    notice: {
      code: 'position_beyond_end',
      message: 'x',
      requested_last_event_id: 99,
      resumed_after: 10,
      first_seq: 1,
      last_seq: 10,
    },
  };
  const { connect, starts } = scripted([{ items: [notice, event(11)], end: lost }]);
  await drain(new ResumingStream({ from: 99, retryMs: 1 }, connect));
  expect(starts).toEqual([99, 11]);
});

it('doubles the wait per consecutive failure, resets it after an event, and ends with a final error', async () => {
  const stop = new MdpError('key_revoked', 'revoked');
  const { connect } = scripted([
    { items: [], end: lost },
    { items: [], end: lost },
    { items: [event(1)], end: lost },
    { items: [], end: lost },
    { items: [], end: { retry: false, error: stop } },
  ]);
  const { items, error } = await drain(new ResumingStream({ retryMs: 2, random: () => 0.5 }, connect));
  const waits = items.filter((i) => i.type === 'reconnecting');
  expect(waits.map((w) => [w.attempt, w.delayMs])).toEqual([
    [1, 3],
    [2, 5],
    [1, 3],
    [2, 5],
  ]);
  expect(error).toBe(stop);
});

it('gives up after maxAttempts consecutive failures, and close() ends it normally', async () => {
  const failing: Connect = async function* () {
    yield* [];
    return lost;
  };
  const { items, error } = await drain(new ResumingStream({ retryMs: 1, maxAttempts: 3 }, failing));
  expect(items.filter((i) => i.type === 'reconnecting')).toHaveLength(2);
  expect(error).toBe(lost.error);

  const s = new ResumingStream({ retryMs: 60_000 }, failing);
  const done = drain(s);
  s.close();
  expect((await done).error).toBeNull();
});

it('reads gRPC FeedMessages as the JSON events and typed values of the unified stream', () => {
  const book = itemOfFeedMessage({
    kind: 'book',
    book: {
      seq: 7,
      event_type: 'book',
      bids: [],
      asks: [],
      best_bid: 1,
      _best_bid: 'best_bid',
      ingest_us: 0,
    },
  });
  expect(book).toEqual({
    type: 'event',
    seq: 7,
    event: {
      seq: 7,
      event_type: 'book',
      bids: [],
      asks: [],
      best_bid: 1,
      best_ask: null,
      mid_price: null,
      spread_bps: null,
    },
  });
  expect(itemOfFeedMessage({ kind: 'heartbeat', heartbeat: { timestamp_ms: 1 } })).toBeNull();
  expect(
    itemOfFeedMessage({
      kind: 'warning',
      warning: { code: 'feed_stale', message: 'm', request_id: 'req_1' },
    }),
  ).toEqual({
    type: 'warning',
    warning: { code: 'feed_stale', message: 'm', request_id: 'req_1', terminal: false },
  });
});

it('reconnects on disk-sync closes a later attempt can cure, and stops on the others', () => {
  for (const code of [1001, 1006, 1013, 4007, 4009, 4050]) expect(closeAction(code).retry).toBe(true);
  for (const code of [4001, 4002, 4003, 4004, 4005, 4006, 4008]) expect(closeAction(code).retry).toBe(false);
  expect(closeAction(4002).code).toBe('key_revoked');
});
