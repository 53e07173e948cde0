/**
 * Slow client: a client that stops reading gets book updates conflated (its book sequences have
 * gaps, its trade sequences none), then `upstream_lag`, then a terminal `reconnect`; what the
 * gateway held for it (queue + the socket's unsent bytes, the connection's high-water mark, kept
 * at every change) never exceeds the stated bound; a fast client on the same gateway meanwhile
 * receives every event.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse } from '../support/sse.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const MAX_BACKLOG = 256 * 1024;
/** Larger than any one frame the publisher below makes (a 40-level book is about 2 KiB). */
const FRAME = 8 * 1024;
let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url, {
    SSE_MAX_BACKLOG_BYTES: String(MAX_BACKLOG),
    SSE_CLOSE_GRACE_MS: '60000',
  });
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('conflates, warns with upstream_lag, then disconnects a client that stopped reading', async () => {
  const url = `${gw.url}/api/v1/unified/stream`;
  const fastIds: number[] = [];
  const fastTypes = new Map<number, string>();
  const fast = await openSse(url, (m) => {
    if (!m.id) return;
    fastIds.push(Number(m.id));
    fastTypes.set(Number(m.id), JSON.parse(m.data).event_type);
  });

  // The slow client reads the headers, then nothing: its socket buffers fill up.
  const slowChunks: Buffer[] = [];
  const slowEnded = new Promise<void>((resolve) => {
    const req = request(url, (res) => {
      res.pause();
      res.on('data', (c: Buffer) => slowChunks.push(c));
      res.on('end', resolve);
      res.on('error', resolve);
      (globalThis as { resumeSlow?: () => void }).resumeSlow = () => res.resume();
    });
    req.end();
  });
  await eventually(async () => gw.unified.registry.size >= 2, 10_000, 'both clients registered');

  const publisher = publishAtRate(gw.nats.js, ['BTC', 'ETH'], 1_000, { booksEvery: 2, bookLevels: 40 });
  let maxBacklog = 0;
  const deadline = Date.now() + 40_000;
  while (gw.unified.registry.size === 2 && Date.now() < deadline) {
    maxBacklog = Math.max(maxBacklog, gw.unified.registry.maxBacklogBytes());
    await sleep(5);
  }
  await publisher.stop();
  expect(gw.unified.registry.size, 'the slow client was never disconnected').toBe(1);
  (globalThis as { resumeSlow?: () => void }).resumeSlow?.();
  await slowEnded;

  const last_seq = await lastSeq(gw.nats);
  await eventually(
    async () => fastIds.at(-1) === last_seq || gw.unified.registry.size !== 1,
    20_000,
    `the fast client reaching the last sequence ${last_seq}`,
  );
  expect(gw.unified.registry.size, 'the fast client was disconnected').toBe(1);
  fast.abort();

  const text = Buffer.concat(slowChunks).toString();
  const errors = [...text.matchAll(/event: error\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1] as string));
  expect(
    errors.map((e) => e.code),
    text.slice(-600),
  ).toEqual(['upstream_lag', 'reconnect']);
  expect(errors[0].terminal).toBe(false);
  expect(errors[1].terminal).toBe(true);
  expect(text.indexOf('upstream_lag')).toBeLessThan(text.indexOf('"reconnect"'));
  expect(maxBacklog).toBeLessThanOrEqual(MAX_BACKLOG + FRAME);
  // The high-water mark counts the socket's unsent bytes too: the queue's bound plus one frame,
  // the socket's allowance plus the last chunk written (at most the queue), and the terminal frames.
  const highWater = gw.unified.registry.maxHighWaterBytes();
  expect(highWater, 'the slow client never reached backpressure').toBeGreaterThan(MAX_BACKLOG);
  expect(highWater).toBeLessThanOrEqual(SOCKET_BUFFER + 2 * (MAX_BACKLOG + FRAME) + FRAME);
  expect(fastIds).toEqual(Array.from({ length: last_seq }, (_, i) => i + 1));

  // Conflation: between the slow client's first and last event, every trade arrived and some
  // books did not.
  const slowEvents = [...text.matchAll(/^id: (\d+)\ndata: (.*)$/gm)].map((m) => ({
    seq: Number(m[1]),
    type: JSON.parse(m[2] as string).event_type as string,
  }));
  expect(slowEvents.length).toBeGreaterThan(0);
  const first = slowEvents[0]?.seq as number;
  const last = slowEvents.at(-1)?.seq as number;
  const inRange = (type: string) =>
    fastIds.filter((id) => id >= first && id <= last && fastTypes.get(id) === type);
  const slowOf = (type: string) => slowEvents.filter((e) => e.type === type).map((e) => e.seq);
  expect(slowOf('trade'), 'a trade was dropped').toEqual(inRange('trade'));
  expect(slowOf('book').length, 'no book was conflated').toBeLessThan(inRange('book').length);
  expect(slowOf('book').length).toBeGreaterThan(0);
});
