/**
 * The client's two positions (clients/typescript/src/resuming-stream.ts, own-events.ts): a stream
 * with the account's own events (`own: true`, their `seq` an `OWN` sequence) keeps the last
 * platform sequence and the last own sequence apart: each event is deduplicated against its own
 * part only, every reconnection sends both (SSE `Last-Event-ID: N:K`, gRPC `after_own_seq`,
 * disk-sync `from_own_seq`), a saved `resumePosition()` starts another iterator, and the CLI's
 * sync directory recovers both parts.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { recoverPosition } from '../../clients/cli/src/sync/recover.ts';
import { segmentName } from '../../clients/cli/src/sync/segments.ts';
import { SegmentWriter } from '../../clients/cli/src/sync/writer.ts';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import type { OpenSocket } from '../../clients/typescript/src/disk-socket.ts';
import { MdpError } from '../../clients/typescript/src/errors.ts';
import { itemOfFeedMessage } from '../../clients/typescript/src/grpc-messages.ts';
import { formatPosition, isOwn, parsePosition } from '../../clients/typescript/src/own-events.ts';
import {
  type Connect,
  type Ended,
  ResumingStream,
  type WireItem,
} from '../../clients/typescript/src/resuming-stream.ts';
import { stream } from '../../clients/typescript/src/stream.ts';
import type { Position, StreamItem } from '../../clients/typescript/src/stream-types.ts';

const platform = (seq: number): WireItem => ({
  type: 'event',
  seq,
  event: { seq, event_type: 'trade', symbol: 'BTC' } as never,
});
const own = (seq: number): WireItem => ({
  type: 'event',
  seq,
  event: { seq, own: true, event_type: 'trade', symbol: 'BTCUSDT' } as never,
});
const lost: Ended = { retry: true, error: new MdpError('network_error', 'cut') };
const over: Ended = { retry: false, error: new MdpError('invalid_response', 'script over') };

/** Scripted connections; records the (platform, own) positions each one started after. */
function scripted(script: WireItem[][]): { connect: Connect; starts: [Position | null, Position | null][] } {
  const starts: [Position | null, Position | null][] = [];
  const connect: Connect = async function* (position, _signal, _window, ownPosition) {
    starts.push([position, ownPosition]);
    const items = script[starts.length - 1];
    if (!items) return over;
    for (const item of items) yield [item];
    return lost;
  };
  return { connect, starts };
}

async function drain(s: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  try {
    for await (const i of s) items.push(i);
  } catch {}
  return items;
}

/** Events as `p<seq>` (platform) and `o<seq>` (own), in the order yielded. */
const tags = (items: StreamItem[]) =>
  items.flatMap((i) => (i.type === 'event' ? [`${isOwn(i.event) ? 'o' : 'p'}${i.seq}`] : []));

it('dedupes own events against the own position and platform events against the platform one, across reconnects', async () => {
  // Own sequences are small (their own stream): 2 after platform 7 is new, never "already seen".
  const { connect, starts } = scripted([
    [platform(5), own(1), platform(6), own(2), platform(7)],
    // The server replays from before what was seen, on both feeds, interleaved differently.
    [own(1), platform(6), own(2), platform(7), own(3), platform(8), own(4)],
    [platform(8), own(4), own(5), platform(9)],
  ]);
  const s = new ResumingStream({ from: 4, retryMs: 1 }, connect);
  const items = await drain(s);
  expect(tags(items)).toEqual(['p5', 'o1', 'p6', 'o2', 'p7', 'o3', 'p8', 'o4', 'o5', 'p9']);
  expect(starts).toEqual([
    [4, null],
    [7, 2],
    [8, 4],
    [9, 5],
  ]);
  expect(s.resumePosition()).toEqual({ seq: 9, own_seq: 5 });
  expect(s.position).toBe(9);
  expect(s.ownPosition).toBe(5);
});

it('resumes from a saved pair, or from a plain number as before', async () => {
  const pair = scripted([[own(3), own(4), platform(10), platform(11)]]);
  const s = new ResumingStream({ from: { seq: 10, own_seq: 3 }, retryMs: 1 }, pair.connect);
  expect(tags(await drain(s))).toEqual(['o4', 'p11']);
  expect(pair.starts[0]).toEqual([10, 3]);

  const plain = scripted([[platform(10), platform(11), own(1)]]);
  const p = new ResumingStream({ from: 10, retryMs: 1 }, plain.connect);
  expect(p.resumePosition()).toEqual({ seq: 10 });
  expect(tags(await drain(p))).toEqual(['p11', 'o1']);
  expect(plain.starts[0]).toEqual([10, null]);
});

it('moves the own position where an own position notice says, and the platform one otherwise', async () => {
  const notice = (feed?: 'own'): WireItem => ({
    type: 'notice',
    notice: {
      code: 'position_not_retained',
      message: 'x',
      requested_last_event_id: 1,
      resumed_after: feed ? 40 : 500,
      first_seq: 1,
      last_seq: 1,
      ...(feed ? { feed } : {}),
    },
  });
  const { connect, starts } = scripted([[notice('own'), own(41), notice(), platform(501)], []]);
  const s = new ResumingStream({ from: { seq: 2, own_seq: 1 }, retryMs: 1 }, connect);
  expect(tags(await drain(s))).toEqual(['o41', 'p501']);
  expect(starts[1]).toEqual([501, 41]);
});

/** A fake SSE server: each connection serves the next body, records its Last-Event-ID. */
function sseServer(bodies: string[]): { fetch: typeof fetch; sent: (string | null)[] } {
  const sent: (string | null)[] = [];
  const fake = async (_url: unknown, init?: RequestInit) => {
    sent.push(new Headers(init?.headers).get('last-event-id'));
    const body = bodies[sent.length - 1];
    if (body === undefined) return new Response('{"error":"forbidden"}', { status: 403 });
    return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  };
  return { fetch: fake as typeof fetch, sent };
}
const sse = (id: string, ev: Record<string, unknown>) => `id: ${id}\ndata: ${JSON.stringify(ev)}\n\n`;
const trade = { event_type: 'trade', symbol: 'BTC' };

it('SSE: reads N:K ids, sends the pair as Last-Event-ID, and yields each event once', async () => {
  const server = sseServer([
    // A live start whose first event is an own one: the id names the platform start (100).
    `retry: 1\n\n${sse('100:7', { seq: 7, own: true, ...trade })}${sse('101:7', { seq: 101, ...trade })}`,
    `${sse('101:7', { seq: 101, ...trade })}${sse('101:8', { seq: 8, own: true, ...trade })}${sse('102:8', { seq: 102, ...trade })}`,
    `${sse('102:8', { seq: 102, ...trade })}${sse('102:8', { seq: 8, own: true, ...trade })}${sse('103:8', { seq: 103, ...trade })}`,
  ]);
  const s = stream({ url: 'http://x', key: 'k', fetch: server.fetch, random: () => 0.5, maxAttempts: 4 });
  const items = await drain(s);
  expect(tags(items)).toEqual(['o7', 'p101', 'o8', 'p102', 'p103']);
  expect(server.sent).toEqual([null, '101:7', '102:8', '103:8']);
  expect(s.resumePosition()).toEqual({ seq: 103, own_seq: 8 });
  // Items carry the event's own sequence, never the transport's id.
  expect(items.find((i) => i.type === 'event')).toEqual({
    type: 'event',
    seq: 7,
    event: { seq: 7, own: true, ...trade },
  });
});

it('SSE: a platform-only stream sends one number, as before', async () => {
  const server = sseServer([
    `retry: 1\n\n${sse('5', { seq: 5, ...trade })}${sse('6', { seq: 6, ...trade })}`,
  ]);
  const s = stream({
    url: 'http://x',
    key: 'k',
    from: 4,
    fetch: server.fetch,
    random: () => 0.5,
    maxAttempts: 2,
  });
  expect(tags(await drain(s))).toEqual(['p5', 'p6']);
  expect(server.sent).toEqual(['4', '6']);
  expect(s.resumePosition()).toEqual({ seq: 6 });
});

it('gRPC: `own` marks own events only (false, the proto3 default, is left out)', () => {
  const mine = itemOfFeedMessage({ trade: { seq: 3, own: true, symbol: 'BTCUSDT', ingest_us: 0 } });
  const theirs = itemOfFeedMessage({ trade: { seq: 30, own: false, symbol: 'BTC', ingest_us: 0 } });
  expect(mine).toEqual({ type: 'event', seq: 3, event: { seq: 3, own: true, symbol: 'BTCUSDT' } });
  expect(theirs).toEqual({ type: 'event', seq: 30, event: { seq: 30, symbol: 'BTC' } });
});

it('disk-sync: subscribes with from_seq and from_own_seq, taking the start from `subscribed`', async () => {
  const subscribes: Record<string, unknown>[] = [];
  const frames = [
    // Live start; the first event is an own one: `subscribed.after_seq` is the platform start.
    [{ type: 'subscribed', id: 'mdp-client', after_seq: 900 }, [{ seq: 2, own: true, ...trade }]],
    [
      { type: 'subscribed', id: 'mdp-client', after_seq: 900 },
      [
        { seq: 2, own: true, ...trade },
        { seq: 901, ...trade },
      ],
    ],
  ];
  const openSocket: OpenSocket = async (_url, _key, on) => {
    const script = frames[subscribes.length];
    queueMicrotask(() => on.open());
    return {
      send(text) {
        const m = JSON.parse(text) as Record<string, unknown>;
        if (m.op !== 'subscribe') return;
        subscribes.push(m);
        if (!script) return on.close(4001, 'bad key');
        for (const f of script) on.message(JSON.stringify(f));
        on.close(1001, 'going away');
      },
      close() {},
    };
  };
  const s = streamDisk({ url: 'ws://x', key: 'k', openSocket, retryMs: 1, random: () => 0, maxAttempts: 3 });
  const items = await drain(s);
  expect(tags(items)).toEqual(['o2', 'p901']);
  expect(subscribes.map((m) => [m.from_seq, m.from_own_seq])).toEqual([
    [undefined, undefined],
    [900, 2],
    [901, 2],
  ]);
});

it('parses and formats positions as the SSE id', () => {
  expect(parsePosition('12')).toEqual({ seq: 12 });
  expect(parsePosition(' 12:3 ')).toEqual({ seq: 12, own_seq: 3 });
  expect(formatPosition({ seq: 12, own_seq: 3 })).toBe('12:3');
  expect(formatPosition({ seq: 12 })).toBe('12');
  expect(formatPosition(12)).toBe('12');
  for (const bad of ['', '1:', ':2', '1:2:3', '-1', 'x', '99999999999999999'])
    expect(() => parsePosition(bad)).toThrow(/position/);
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'client-own-'));
  dirs.push(d);
  return d;
};

it('sync: a directory recovers its last platform and last own sequences; own-first segments keep name order', async () => {
  const dir = tmp();
  const w = new SegmentWriter(dir, 'jsonl', { maxBytes: 1, maxAgeMs: 60_000 }, 500);
  // maxBytes 1: a segment per record. Own first (named after platform 500), then both kinds.
  for (const r of [
    { seq: 3, own: true },
    { seq: 4, own: true },
    { seq: 501 },
    { seq: 5, own: true },
    { seq: 502 },
    { seq: 6, own: true },
  ])
    await w.write(r);
  await w.close();
  // Names never repeat nor go back (an own-first segment after platform N is named N+1 or later).
  expect(readdirSync(dir).sort()).toEqual([501, 502, 503, 504, 505, 506].map((n) => segmentName(n, 'jsonl')));
  expect(recoverPosition(dir)).toEqual({ seq: 502, own_seq: 6 });

  // A platform-only directory: one number; a cut record is dropped.
  const plain = tmp();
  writeFileSync(join(plain, segmentName(1, 'jsonl')), '{"seq":1}\n{"seq":2}\n{"seq":3');
  expect(recoverPosition(plain)).toEqual({ seq: 2 });
});
