/**
 * Replay by time (issue 31 §1) on every streaming transport, through the real clients (fetch SSE,
 * grpc-js StreamEvents, ws disk-sync), over a stream with a known publication schedule: for random
 * ranges (seeded), each delivers exactly the stored events whose stored time lies in [from, to],
 * in order, once, then `replay_complete` (the range's last sequence and the count) and a clean
 * close (SSE `event: end`, gRPC OK, disk-sync 1000); a replay cut in the middle resumes by
 * position with the same range and ends exact; `from` older than the stream retains is answered
 * with `position_not_retained`; without `to` the replay hands over to live; at speed 1 and 10 the
 * delivery follows the recorded spacing (`timestamp_ms`) within a stated tolerance.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TIER_LIMITS } from '../../contracts/limits.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectSync, type SyncClient, startGuardedDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { keyMetadata, type PriceClient, priceClient, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { openSse } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedMs } from '../support/stored-seqs.ts';

const COINS = ['BTC', 'ETH', 'SOL'];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: TestStack;
let sse: TestGateway;
let grpc: TestGrpc;
let client: PriceClient;
let disk: { address: string; stop(): Promise<void> };
let key = '';
const syncClients: SyncClient[] = [];

/** The schedule as stored: sequence, stored time (ms), coin, and the event's own time. */
type Stored = { seq: number; ms: number; coin: string; eventMs: number };
let stored: Stored[] = [];

/** Publishes `n` trades one by one, spaced 0-12 ms with two pauses of 150 ms, and reads their stored times back. */
async function publishSchedule(n: number, random: () => number): Promise<Stored[]> {
  const from = (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
  for (let i = 0; i < n; i++) {
    const coin = COINS[i % COINS.length] as string;
    await publishNow(stack.nats.js, [{ ...trade(coin, i), timestamp_ms: Date.now() }]);
    await sleep(i === Math.floor(n / 3) || i === Math.floor((2 * n) / 3) ? 150 : Math.floor(random() * 12));
  }
  const out: Stored[] = [];
  const { last_seq } = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
  for (let seq = from + 1; seq <= last_seq; seq++) {
    const m = await stack.nats.jsm.streams.getMessage(STREAMS.MD, { seq });
    if (!m) throw new Error(`stored message ${seq} missing`);
    const ev = JSON.parse(new TextDecoder().decode(m.data));
    out.push({ seq, ms: storedMs(m.timestamp), coin: ev.symbol, eventMs: ev.timestamp_ms });
  }
  return out;
}

/** What a replay delivered and how it ended. */
type Replay = {
  seqs: number[];
  notices: Record<string, unknown>[];
  ended: Promise<string>;
  cut(): void;
  /** disk-sync's `subscribed.after_seq`: the position the replay starts after. */
  startedAfter?: number;
};

type Range = { from: number; to?: number; coin?: string; speed?: number; after?: number };

function sseReplay(r: Range): Promise<Replay> {
  const q = new URLSearchParams({ from: new Date(r.from).toISOString() });
  if (r.to !== undefined) q.set('to', String(r.to));
  if (r.coin) q.set('coin', r.coin);
  if (r.speed) q.set('speed', String(r.speed));
  const seqs: number[] = [];
  const notices: Record<string, unknown>[] = [];
  let endEvent = '';
  return openSse(
    `${sse.url}/api/v1/unified/stream?${q}`,
    (m) => {
      if (m.event === 'message') seqs.push(Number(m.id));
      else if (m.event === 'notice') notices.push(JSON.parse(m.data));
      else if (m.event === 'end') endEvent = m.data;
    },
    { 'x-api-key': key, ...(r.after !== undefined ? { 'last-event-id': String(r.after) } : {}) },
  ).then((s) => {
    expect(s.status).toBe(200);
    return { seqs, notices, ended: s.done.then(() => (endEvent ? 'end' : 'cut')), cut: () => s.abort() };
  });
}

async function grpcReplay(r: Range): Promise<Replay> {
  const seqs: number[] = [];
  const notices: Record<string, unknown>[] = [];
  const call = client.StreamEvents(
    {
      start_ms: r.from,
      ...(r.to !== undefined ? { end_ms: r.to } : {}),
      ...(r.coin ? { coins: [r.coin] } : {}),
      ...(r.speed ? { speed: r.speed } : {}),
      ...(r.after !== undefined ? { after_seq: r.after } : {}),
    },
    keyMetadata(key),
  ) as ClientReadableStream<Record<string, unknown>>;
  call.on('data', (m) => {
    if (m.trade) seqs.push(Number((m.trade as { seq: number }).seq));
    if (m.notice) notices.push(m.notice as Record<string, unknown>);
  });
  const ended = new Promise<string>((resolve) => {
    call.on('status', (s) => resolve(s.code === 0 ? 'end' : `status ${s.code}`));
    call.on('error', () => {});
  });
  await new Promise((r2) => call.once('metadata', r2));
  return { seqs, notices, ended, cut: () => call.cancel() };
}

async function diskReplay(r: Range): Promise<Replay> {
  // disk-sync holds one connection per key until it has seen the last one close: a key per replay.
  const c = connectSync(disk.address, { key: (await stack.accounts.key('quant')).key });
  syncClients.push(c);
  c.send({
    op: 'subscribe',
    id: 'range',
    from_time: r.from,
    ...(r.to !== undefined ? { to_time: new Date(r.to).toISOString() } : {}),
    ...(r.coin ? { coins: [r.coin] } : {}),
    ...(r.speed ? { speed: r.speed } : {}),
    ...(r.after !== undefined ? { from_seq: r.after } : {}),
  });
  await Promise.race([c.control('subscribed'), c.closed]);
  if (!c.controls.some((m) => m.type === 'subscribed'))
    throw new Error(`disk-sync closed before subscribed: ${JSON.stringify(await c.closed)}`);
  return {
    get seqs() {
      return c.events.map((e) => e.seq);
    },
    get notices() {
      return c.controls.filter((m) => m.type === 'notice') as Record<string, unknown>[];
    },
    ended: c.closed.then(({ code }) => (code === 1000 ? 'end' : `close ${code}`)),
    cut: () => c.ws.terminate(),
    startedAfter: Number(c.controls.find((m) => m.type === 'subscribed')?.after_seq),
  };
}

const transports = [
  { name: 'SSE', open: sseReplay },
  { name: 'gRPC StreamEvents', open: grpcReplay },
  { name: 'disk-sync', open: diskReplay },
];

beforeAll(async () => {
  stack = await startStack();
  const log = createLogger(stack.config.LOG_LEVEL, 'replay');
  sse = await startTestGateway(stack.server.url, {}, { guard: 'keys' });
  grpc = await startTestGrpc(stack.nats, stack.config);
  client = priceClient(grpc.target);
  disk = await startGuardedDisksync(stack.nats, stack.config, log);
  key = (await stack.accounts.key('quant')).key;
  // The schedule's jitter is fixed (seed 7): the ranges over it are the seeded random inputs.
  let state = 7;
  stored = await publishSchedule(240, () => {
    state = (state * 48_271) % 2_147_483_647;
    return state / 2_147_483_647;
  });
}, 90_000);

afterAll(async () => {
  for (const c of syncClients) c.ws.terminate();
  client?.close();
  await disk?.stop();
  await grpc?.close();
  await sse?.close();
  await stack?.close();
});

/** The stored sequences a range selects: stored time in [from, to], the coin if named. */
const expected = (r: Range) =>
  stored
    .filter((s) => s.ms >= r.from && (r.to === undefined || s.ms <= r.to) && (!r.coin || s.coin === r.coin))
    .map((s) => s.seq);
/** The last sequence stored at or before `to` (the `last_seq` of `replay_complete`). */
const lastAtOrBefore = (to: number) => stored.filter((s) => s.ms <= to).at(-1)?.seq ?? 0;

describe.each(transports)('replay by time on $name', ({ open }) => {
  it('delivers exactly the stored events of random ranges, then replay_complete and a clean close', async () => {
    const { random } = seededRandom('replay ranges');
    const first = (stored[0] as Stored).ms;
    const last = (stored.at(-1) as Stored).ms;
    for (let round = 0; round < 4; round++) {
      const a = first - 5 + Math.floor(random() * (last - first + 10));
      const b = first - 5 + Math.floor(random() * (last - first + 10));
      const range: Range = {
        from: Math.min(a, b),
        to: Math.max(a, b),
        ...(round % 2 ? { coin: 'ETH' } : {}),
      };
      const replay = await open(range);
      expect(await replay.ended, `round ${round}`).toBe('end');
      const want = expected(range);
      expect(replay.seqs, `round ${round} ${JSON.stringify(range)}`).toEqual(want);
      if (replay.startedAfter !== undefined)
        expect(replay.startedAfter).toBe(
          stored.filter((x) => x.ms < range.from).at(-1)?.seq ?? (stored[0] as Stored).seq - 1,
        );
      const complete = replay.notices.find((n) => n.code === 'replay_complete');
      expect(complete, `round ${round}`).toMatchObject({ count: want.length });
      expect(Number(complete?.last_seq)).toBe(lastAtOrBefore(range.to as number));
    }
  });

  it('resumes a replay cut in the middle by position, with the same range, exactly', async () => {
    const { random } = seededRandom('replay cut');
    // Paced (speed 2: about 0.7 s for the range), so each cut lands in the middle of it.
    const range: Range = { from: (stored[10] as Stored).ms, to: (stored[200] as Stored).ms, speed: 2 };
    const want = expected(range);
    const got: number[] = [];
    let after: number | undefined;
    for (let cut = 0; cut < 3; cut++) {
      const replay = await open({ ...range, ...(after !== undefined ? { after } : {}) });
      const stopAt = got.length + 10 + Math.floor(random() * 30);
      await eventually(
        () => got.length + replay.seqs.length >= stopAt,
        20_000,
        `cut ${cut} reaching ${stopAt}`,
      );
      replay.cut();
      await replay.ended;
      got.push(...replay.seqs);
      after = got.at(-1);
    }
    const rest = await open({ ...range, after });
    expect(await rest.ended).toBe('end');
    got.push(...rest.seqs);
    expect(got).toEqual(want);
  });

  it('ends a replay whose to is still ahead when the clock reaches it, with what was stored by then', async () => {
    const from = Date.now();
    const to = from + 1_000;
    // Publishing starts with the request and goes on past `to`, whatever the time the replay takes
    // to open: events are stored before, during and after the window.
    const publisher = (async () => {
      for (let i = 0; Date.now() < to + 300; i++) {
        await publishNow(stack.nats.js, [{ ...trade('SOL', 2_000 + i), timestamp_ms: Date.now() }]);
        await sleep(25);
      }
    })();
    const replay = await open({ from, to });
    expect(await replay.ended).toBe('end');
    await publisher;
    const { last_seq } = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
    const want: number[] = [];
    const times = new Map<number, string>();
    for (let seq = (stored.at(-1) as Stored).seq + 1; seq <= last_seq; seq++) {
      const m = await stack.nats.jsm.streams.getMessage(STREAMS.MD, { seq });
      const ms = m ? storedMs(m.timestamp) : -1;
      times.set(seq, m?.timestamp ?? 'none');
      if (ms >= from && ms <= to) want.push(seq);
    }
    expect(want.length).toBeGreaterThan(5);
    // A failure names each sequence on one side only, with its stored time, against from and to.
    const only = (a: number[], b: number[]) =>
      a.filter((x) => !b.includes(x)).map((x) => `${x} ${times.get(x)}`);
    expect(
      replay.seqs,
      `from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}: replayed only ${JSON.stringify(only(replay.seqs, want))}, stored in the range only ${JSON.stringify(only(want, replay.seqs))}`,
    ).toEqual(want);
    expect(replay.notices.find((n) => n.code === 'replay_complete')).toMatchObject({ count: want.length });
  });

  it('hands over to live when no end is given', async () => {
    const before = (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
    const tail = [before - 2, before - 1, before];
    const third = await stack.nats.jsm.streams.getMessage(STREAMS.MD, { seq: before - 2 });
    const replay = await open({ from: storedMs(third?.timestamp ?? '') });
    await eventually(() => replay.seqs.length >= 3, 10_000, 'the last stored events replayed');
    await publishNow(stack.nats.js, [{ ...trade('BTC', 999), timestamp_ms: Date.now() }]);
    const { last_seq } = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
    await eventually(() => replay.seqs.at(-1) === last_seq, 10_000, 'the live event');
    expect(replay.seqs.slice(0, 3)).toEqual(tail);
    expect(replay.seqs.slice(3)).toEqual(
      Array.from({ length: last_seq - (tail.at(-1) as number) }, (_, i) => (tail.at(-1) as number) + 1 + i),
    );
    replay.cut();
    await replay.ended;
  });
});

describe('replay pacing', () => {
  it.each([1, 10])('follows the recorded spacing at speed %d', async (speed) => {
    // At speed 1, about 40 events spanning one of the schedule's 150 ms pauses; at speed 10, the
    // schedule less its ends (both pauses), so that either lasts a few hundred ms.
    const mid = Math.floor(stored.length / 3);
    const slice = speed === 1 ? stored.slice(mid - 20, mid + 20) : stored.slice(10, -10);
    const range: Range = { from: (slice[0] as Stored).ms, to: (slice.at(-1) as Stored).ms, speed };
    const arrivals = new Map<number, number>();
    const q = new URLSearchParams({ from: String(range.from), to: String(range.to), speed: String(speed) });
    const s = await openSse(
      `${sse.url}/api/v1/unified/stream?${q}`,
      (m) => {
        if (m.event === 'message') arrivals.set(Number(m.id), performance.now());
      },
      { 'x-api-key': key },
    );
    await s.done;
    const events = stored.filter((e) => arrivals.has(e.seq));
    expect(events.map((e) => e.seq)).toEqual(expected(range));
    const e0 = (events[0] as Stored).eventMs;
    const want = (e: Stored) => (e.eventMs - e0) / speed;
    // An event's offset: its arrival less its recorded time ÷ speed. Paced, every offset is the
    // start plus that event's delivery delay (never negative: the server sends none early). The
    // anchor is the median offset, so late events (the first one, say, stuck behind a busy event
    // loop) do not move it unless they are half of them. Tolerance: no offset more than 25 ms below the
    // anchor, none more than 150 ms + 50 % of its time above it. Without pacing the offsets fall
    // with the recorded time (the last ones fail the first bound); a speed ignored makes them
    // grow (the last ones fail the second).
    const offsets = events.map((e) => (arrivals.get(e.seq) as number) - want(e));
    const anchor = [...offsets].sort((a, b) => a - b)[Math.floor(offsets.length / 2)] as number;
    events.forEach((e, i) => {
      const off = (offsets[i] as number) - anchor;
      const what = `event ${e.seq}: ${off.toFixed(1)} ms from its time ${want(e).toFixed(1)} ms (speed ${speed})`;
      expect(off, what).toBeGreaterThanOrEqual(-25);
      expect(off, what).toBeLessThanOrEqual(150 + 0.5 * want(e));
    });
  });
});

describe('replay positions', () => {
  it('answers a from older than the stream retains with position_not_retained, then replays from the oldest', async () => {
    const keepFrom = (stored[50] as Stored).seq;
    await stack.nats.jsm.streams.purge(STREAMS.MD, { seq: keepFrom });
    stored = stored.filter((s) => s.seq >= keepFrom);
    const range: Range = { from: 0, to: (stored[20] as Stored).ms };
    for (const t of transports) {
      const replay = await t.open(range);
      expect(await replay.ended, t.name).toBe('end');
      expect(replay.notices[0], t.name).toMatchObject({ code: 'position_not_retained', first_seq: keepFrom });
      expect(replay.seqs, t.name).toEqual(expected(range));
    }
  });

  it('refuses a to before from, and an unknown speed, with the field named', async () => {
    const bad = await fetch(`${sse.url}/api/v1/unified/stream?from=2000&to=1000`, {
      headers: { 'x-api-key': key },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toContain('to must be at or after from');
    const slow = await fetch(`${sse.url}/api/v1/unified/stream?from=2000&speed=fast`, {
      headers: { 'x-api-key': key },
    });
    expect(slow.status).toBe(400);
    expect(JSON.stringify(await slow.json())).toContain('speed');
  });

  it("counts replays in the key's concurrent-stream cap (Pro 10): one more is refused on SSE (429 subscription_limit) and gRPC (RESOURCE_EXHAUSTED)", async () => {
    const pro = (await stack.accounts.key('pro')).key;
    const cap = TIER_LIMITS.pro.concurrentStreams;
    const from = (stored[0] as Stored).ms;
    const open: (() => void)[] = [];
    // A paced replay with no end stays open: each holds one of the key's stream slots.
    for (let i = 0; i < cap; i++) {
      const s = await openSse(`${sse.url}/api/v1/unified/stream?from=${from}&speed=0.01`, () => {}, {
        'x-api-key': pro,
      });
      expect(s.status).toBe(200);
      open.push(() => s.abort());
    }
    const refused = await fetch(`${sse.url}/api/v1/unified/stream?from=${from}`, {
      headers: { 'x-api-key': pro },
    });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error).toBe('subscription_limit');
    const call = client.StreamEvents({ start_ms: from }, keyMetadata(pro)) as ClientReadableStream<unknown>;
    const status = await new Promise<{ code: number }>((resolve) => {
      call.on('error', () => {});
      call.on('status', resolve);
    });
    expect(status.code).toBe(8); // RESOURCE_EXHAUSTED
    for (const close of open) close();
  });
});
