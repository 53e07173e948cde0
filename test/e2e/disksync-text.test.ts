/**
 * Event text beyond ASCII through the disk-sync edge, as its data frames are written (gateways/
 * disksync/wire.ts: straight into bytes, UTF-8 for json, the transcoded bytes for msgpack): trades
 * whose `trade_id` holds two-, three- and four-byte UTF-8 characters reach a json and a msgpack
 * client exactly as published, from history (many events to a frame) and live (one event to a
 * frame), on a private nats-server and the real `ws` client. Connections of one selection share
 * their flushes' messages; one with two subscriptions shares none, and each gets its own events.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Encoding } from '../../contracts/disksync.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import { mdSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import {
  connectSync,
  type InProcessDisksync,
  type SyncClient,
  startInProcessDisksync,
} from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { trade } from '../support/publisher.ts';

const TEXTS = ['é', 'naïve café', '日本円', '🚀 to the moon', 'a\u00a0b\u2028c', '"quoted" \\ back'];
let server: TestNats;
let nats: Nats;
let edge: InProcessDisksync;
const clients: SyncClient[] = [];
/** What was published, by sequence. */
const published = new Map<number, Record<string, unknown>>();
let n = 0;

async function publish(count: number, coin = 'BTC'): Promise<void> {
  for (let i = 0; i < count; i++) {
    const ev = { ...trade(coin, n), trade_id: `${TEXTS[n % TEXTS.length]} #${n}` };
    n++;
    const ack = await nats.js.publish(mdSubject('synthetic', coin, 'trade'), encodeStoredEvent(ev));
    published.set(ack.seq, ev);
  }
}

const seqsOf = (coins: string[]) =>
  [...published].filter(([, ev]) => coins.includes(ev.symbol as string)).map(([seq]) => seq);

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
  await publish(60);
  edge = await startInProcessDisksync(server.url);
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await edge?.close();
  await nats?.nc.close();
  await server?.cleanup();
});

it.each(['json', 'msgpack'] as Encoding[])(
  '%s: multi-byte text arrives as published, from history and live',
  async (encoding) => {
    const c = connectSync(edge.url);
    clients.push(c);
    c.send({ op: 'subscribe', id: 's', from_seq: 0, encoding });
    await c.control('caught_up');
    // Each live event is published once the one before it is in: two that reach the edge in one
    // read of NATS would rightly share a frame.
    const live = 12;
    const received = () => c.events.length >= published.size || null;
    for (let i = 0; i < live; i++) {
      await publish(1);
      await eventually(received, 15_000, `live event ${i + 1}`);
    }
    expect(c.events.map((e) => e.seq)).toEqual([...published.keys()]);
    for (const e of c.events) {
      const { seq, ...rest } = e;
      expect(rest).toEqual(published.get(seq));
    }
    // History came many to a frame; live events one to a frame.
    expect(c.frameBytes.length).toBeLessThan(c.events.length);
    expect(c.frameBytes.length).toBeGreaterThanOrEqual(live);
    await c.close();
  },
);

it('one selection shares its messages; two subscriptions on a connection get both, in order', async () => {
  const open = (subs: { id: string; coins: string[] }[]) => {
    const c = connectSync(edge.url);
    clients.push(c);
    for (const s of subs) c.send({ op: 'subscribe', from_seq: 0, encoding: 'json', ...s });
    return c;
  };
  // History with both coins interleaved, then all three connections replay it at once.
  for (let i = 0; i < 40; i++) await publish(1, i % 3 === 0 ? 'ETH' : 'BTC');
  const a = open([{ id: 'a', coins: ['BTC'] }]);
  const b = open([{ id: 'b', coins: ['BTC'] }]);
  const c = open([
    { id: 'c1', coins: ['BTC'] },
    { id: 'c2', coins: ['ETH'] },
  ]);
  await Promise.all([a, b].map((x) => x.control('caught_up')));
  await c.control('caught_up', (m) => m.id === 'c2');
  for (let i = 0; i < 12; i++) await publish(1, i % 2 ? 'ETH' : 'BTC');
  const btc = seqsOf(['BTC']);
  await eventually(
    () => (a.events.length >= btc.length && b.events.length >= btc.length) || null,
    15_000,
    'BTC',
  );
  expect(a.events.map((e) => e.seq)).toEqual(btc);
  expect(b.events.map((e) => e.seq)).toEqual(btc);
  // Two feeds: each coin's events once and in order; together, every one of both coins.
  const both = seqsOf(['BTC', 'ETH']);
  await eventually(() => c.events.length >= both.length || null, 15_000, 'BTC and ETH');
  const got = c.events.map((e) => e.seq);
  expect([...got].sort((x, y) => x - y)).toEqual(both);
  expect(got.filter((s) => published.get(s)?.symbol === 'ETH')).toEqual(seqsOf(['ETH']));
  expect(got.filter((s) => published.get(s)?.symbol === 'BTC')).toEqual(btc);
});
