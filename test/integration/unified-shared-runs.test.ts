/**
 * Shared runs (live-tail.ts groups, BufferedSink `run`): clients of one selection take each read's
 * events as one frame joined once for all of them. A client of that group that stops reading for a
 * while (its wire blocked, its queue under the bound) meanwhile takes runs of trades whole and a
 * run with a book event one by one (its queue keeps book frames apart, to conflate), and shared
 * runs again once it drains; it, its neighbours and a client of another selection each receive
 * exactly their events, once, in order, with books and trades interleaved.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runStats, SOCKET_BUFFER } from '../../gateways/core/buffered-sink.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse } from '../support/sse.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  // A bound far above what the paused client falls behind by: it is never conflated or cut.
  gw = await startTestGateway(nats.url, { SSE_MAX_BACKLOG_BYTES: String(64 * 1024 * 1024) });
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Seen = { ids: number[]; coins: Map<number, string> };

async function client(query: string): Promise<Seen & { abort(): void }> {
  const seen: Seen = { ids: [], coins: new Map() };
  const s = await openSse(`${gw.url}/api/v1/unified/stream${query}`, (m) => {
    if (!m.id) return;
    seen.ids.push(Number(m.id));
    seen.coins.set(Number(m.id), JSON.parse(m.data).symbol);
  });
  return { ...seen, abort: () => s.abort() };
}

it('gives every client of a group, and one of another selection, exactly its events while one pauses', async () => {
  const a = await client('');
  const b = await client('');
  const btc = await client('?coin=BTC');
  // The paused client: the same selection as a and b, read with a raw request paused at once.
  const pausedText: Buffer[] = [];
  let resume = () => {};
  await new Promise<void>((resolve, reject) => {
    const req = request(`${gw.url}/api/v1/unified/stream`, (res) => {
      res.pause();
      res.on('data', (c: Buffer) => pausedText.push(c));
      resume = () => res.resume();
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
  await eventually(async () => gw.unified.registry.size >= 4, 10_000, 'four clients registered');
  const before = { ...runStats };

  const publisher = publishAtRate(gw.nats.js, ['BTC', 'ETH', 'SOL'], 3_000, {
    booksEvery: 3,
    bookLevels: 20,
  });
  await eventually(
    async () => gw.unified.registry.maxHighWaterBytes() > SOCKET_BUFFER,
    20_000,
    'the paused client blocked',
  );
  await sleep(500);
  resume();
  await sleep(1_000);
  await publisher.stop();

  const last = await lastSeq(gw.nats);
  const all = Array.from({ length: last }, (_, i) => i + 1);
  const pausedIds = () =>
    [
      ...Buffer.concat(pausedText)
        .toString()
        .matchAll(/^id: (\d+)$/gm),
    ].map((m) => Number(m[1]));
  await eventually(
    async () => a.ids.at(-1) === last && b.ids.at(-1) === last && pausedIds().at(-1) === last,
    20_000,
    `every client of the group reaching ${last}`,
  );
  expect(gw.unified.registry.size, 'a client was cut').toBe(4);
  expect(a.ids).toEqual(all);
  expect(b.ids).toEqual(all);
  expect(pausedIds()).toEqual(all);
  const btcSeqs = all.filter((seq) => a.coins.get(seq) === 'BTC');
  await eventually(async () => btc.ids.at(-1) === btcSeqs.at(-1), 10_000, 'the BTC client done');
  expect(btc.ids).toEqual(btcSeqs);
  // Runs were shared, and the paused client's runs with a book went one by one while it was blocked
  // (which runs of trades it took whole depends on how reads split: test/unit/buffered-sink-runs.test.ts).
  expect(runStats.taken - before.taken).toBeGreaterThan(0);
  expect(runStats.declined - before.declined).toBeGreaterThan(0);
  for (const c of [a, b, btc]) c.abort();
});
