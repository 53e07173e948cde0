/**
 * Resume exactness: a client reading a 1k events/s stream is cut at 20+ random points and
 * reconnects with Last-Event-ID each time; the ids it received are exactly the stream's range.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { replayStats } from '../../gateways/core/replay-source.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse } from '../support/sse.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let nats: TestNats;

beforeAll(async () => {
  nats = await startTestNats();
});

afterAll(async () => {
  await nats?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A 16-event ring forces most resumes through a private JetStream consumer and its handover.
describe.each([
  { ring: '65536', path: 'the ring', via: 'fromRing' as const },
  { ring: '16', path: 'JetStream catch-up', via: 'fromStream' as const },
])('unified stream resume served from $path', ({ ring, via }) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(nats.url, { SSE_RING_SIZE: ring });
    await gw.nats.jsm.streams.purge(STREAMS.MD); // each case owns the stream's range
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('delivers every stream sequence exactly once across 24 random cuts', async () => {
    const streamUrl = `${gw.url}/api/v1/unified/stream`;
    const resumedBefore = replayStats[via];
    const ids: number[] = [];
    const onMessage = (m: { event: string; id: string | null; data: string }) => {
      if (m.event === 'message' && m.id) ids.push(Number(m.id));
    };
    // Connect live first, then start publishing, so the union must be the whole stream.
    let stream = await openSse(streamUrl, onMessage);
    expect(stream.status).toBe(200);
    const publisher = publishAtRate(gw.nats.js, ['BTC', 'ETH', 'SOL'], 1_000);
    let seed = 7;
    const random = () => {
      seed = (seed * 48_271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    for (let cut = 0; cut < 24; cut++) {
      await sleep(40 + random() * 160);
      stream.abort();
      await stream.done;
      if (cut % 3 === 0) await sleep(100 + random() * 200); // every third cut stays away long enough to need the log
      const last = ids.length ? String(ids[ids.length - 1]) : '0';
      if (process.env.DEBUG_RESUME) console.log(cut, last, gw.tail.coveredFrom, gw.tail.lastSeq, replayStats);
      stream = await openSse(streamUrl, onMessage, { 'last-event-id': last });
      expect(stream.status).toBe(200);
    }
    await publisher.stop();
    const last_seq = await lastSeq(gw.nats);
    await eventually(
      async () => ids[ids.length - 1] === last_seq,
      10_000,
      `the client reaching the last sequence ${last_seq} (has ${ids.at(-1)})`,
    );
    stream.abort();

    const { first_seq } = (await gw.nats.jsm.streams.info(STREAMS.MD)).state;
    expect(last_seq - first_seq).toBeGreaterThan(1_000);
    expect(replayStats[via] - resumedBefore).toBeGreaterThan(5);
    expect(ids).toEqual(Array.from({ length: last_seq - first_seq + 1 }, (_, i) => first_seq + i));
  });
});
