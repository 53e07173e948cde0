/**
 * A filtered disk-sync resume whose history holds no more matching events (an in-process edge on
 * a private nats-server, the real `ws` client). The history older than the edge's ring is read
 * with a consumer filtered to the subscription, which is handed matching messages only; the end
 * of history must not wait for the next matching event to be stored:
 * - from the last matching position, with only other coins' events stored after it: `caught_up`
 *   arrives without any new event, and the next matching live event arrives exactly once;
 * - from before some matching events followed by only other coins' events: those events, in
 *   order, then `caught_up`, then live events exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** Generous: a loaded CI machine. Without the fix `caught_up` never comes (no BTC event follows). */
const CAUGHT_UP_MS = 30_000;

const config = testConfig();
let server: TestNats;
let nats: Nats;
let edge: InProcessDisksync;
const clients: SyncClient[] = [];
let n = 0;
/** Stream sequences of every BTC trade published, in order. */
const btcSeqs: number[] = [];
/** How many BTC trades were stored before the edge started. */
const HISTORY_BTC = 3;
/** The newest stream sequence when the edge started (everything up to it is history). */
let lastBefore = 0;

async function publishTrade(coin: string): Promise<number> {
  const ack = await nats.js.publish(
    mdSubject('synthetic', coin, 'trade'),
    encodeStoredEvent(trade(coin, n++)),
  );
  if (coin === 'BTC') btcSeqs.push(ack.seq);
  return ack.seq;
}

function open(): SyncClient {
  const c = connectSync(edge.url);
  clients.push(c);
  return c;
}

/** Publishes ETH, then BTC, and waits for that BTC trade; then a second BTC as a marker. */
async function expectLiveOnce(c: SyncClient, caughtUpSeq: number): Promise<void> {
  await publishTrade('ETH');
  const live = await publishTrade('BTC');
  await publishTrade('ETH');
  const marker = await publishTrade('BTC');
  await eventually(() => c.events.some((e) => e.seq === marker), 20_000, `live BTC trade ${marker}`);
  const after = c.events.filter((e) => e.seq > caughtUpSeq).map((e) => e.seq);
  expect(after).toEqual([live, marker]);
}

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  // History: BTC trades, then only ETH trades. The edge's ring starts empty after all of it.
  for (let i = 0; i < HISTORY_BTC; i++) await publishTrade('BTC');
  for (let i = 0; i < 20; i++) lastBefore = await publishTrade('ETH');
  edge = await startInProcessDisksync(server.url);
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await edge?.close();
  await nats?.nc.close().catch(() => {});
  await server?.cleanup();
});

describe('a filtered resume with no matching event left in history', () => {
  it('from the last BTC trade: caught_up with no new event, then each live BTC trade once', async () => {
    const from = btcSeqs[HISTORY_BTC - 1] as number;
    const c = open();
    c.send({ op: 'subscribe', id: 'btc', coins: ['BTC'], event_types: ['trade'], from_seq: from });
    expect(await c.control('subscribed')).toMatchObject({ id: 'btc', after_seq: from });
    const caughtUp = await c.control('caught_up', (x) => x.id === 'btc', CAUGHT_UP_MS);
    expect(c.events).toEqual([]);
    // History ends where the ring begins: past every stored ETH trade, before any live event.
    expect(caughtUp.seq).toBeGreaterThanOrEqual(lastBefore);
    await expectLiveOnce(c, caughtUp.seq as number);
    await c.close();
  });

  it('from before the BTC trades: every BTC trade in order, then caught_up, then live ones once', async () => {
    const from = (btcSeqs[0] as number) - 1;
    const stored = btcSeqs.slice(); // the history ones, then the live ones of the test above (ring)
    const c = open();
    c.send({ op: 'subscribe', id: 'btc', coins: ['BTC'], from_seq: from, encoding: 'msgpack' });
    const caughtUp = await c.control('caught_up', (x) => x.id === 'btc', CAUGHT_UP_MS);
    expect(c.events.map((e) => e.seq)).toEqual(stored);
    expect(caughtUp.seq).toBeGreaterThanOrEqual(lastBefore);
    await expectLiveOnce(c, caughtUp.seq as number);
    await c.close();
  });
});
