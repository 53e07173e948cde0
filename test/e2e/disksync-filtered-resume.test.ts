/**
 * A filtered disk-sync resume whose history holds no more matching events (an in-process edge on
 * a private nats-server, the real `ws` client). The history older than the edge's ring is read
 * with a consumer filtered to the subscription, which is handed matching messages only; the end
 * of history must not wait for the next matching event to be stored:
 * - from the last matching position, with only other coins' events stored after it: `caught_up`
 *   arrives without any new event, and the next matching live event arrives exactly once;
 * - from before some matching events followed by only other coins' events: those events, in
 *   order, then `caught_up`, then live events exactly once;
 * - on an edge whose ring (16 events) turns over all the time under a steady flow of other coins'
 *   events, a filtered resume from the start: every matching event exactly once, in order, across
 *   however many history reads, ring scans and handovers it takes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import { mdSubject } from '../../contracts/subjects.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import {
  connectSync,
  type InProcessDisksync,
  listenOpenDisksync,
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

/** A disk-sync edge like startInProcessDisksync's, with a ring of `ringSize` events. */
async function edgeWithRing(ringSize: number): Promise<{ url: string; close(): Promise<void> }> {
  const log = createLogger(config.LOG_LEVEL, 'disksync');
  const own = await connectTestNats(server.url, config);
  const tail = await LiveTail.start(own, log, { ringSize, staleAfterMs: 60_000, expectedCoins: [] });
  const leases = await KeyLeases.open(own, config.DISKSYNC_LEASE_TTL_MS);
  const { url, edge } = await listenOpenDisksync({
    nats: own,
    tail,
    leases,
    log,
    settings: disksyncSettings(config),
  });
  return {
    url,
    async close() {
      await edge.shutdown();
      tail.stop();
      await own.nc.close();
    },
  };
}

describe('a filtered resume while the ring turns over', () => {
  it('delivers every BTC trade once, in order, then live ones', async () => {
    const small = await edgeWithRing(16);
    let publishing = true;
    // A BTC trade, then a stretch of ETH trades longer than the ring and than the history read's
    // quiet time: reads stall short of their goal, which moves on while they wait.
    const flow = (async () => {
      while (publishing) {
        await publishTrade('BTC');
        for (let i = 0; i < 40 && publishing; i++) {
          await publishTrade('ETH');
          await publishTrade('ETH');
          await new Promise((r) => setTimeout(r, 15));
        }
      }
    })();
    try {
      // Resume once the ring has turned over many times, with BTC trades in history and out of it.
      const start = btcSeqs.length;
      await eventually(() => btcSeqs.length >= start + 3, 60_000, 'three BTC trades on the small edge');
      const then = n; // and the newest BTC trade out of the ring: history ends short of it
      await eventually(() => n >= then + 40, 60_000, '40 ETH trades after it');
      const c = connectSync(small.url);
      clients.push(c);
      c.send({ op: 'subscribe', id: 'btc', coins: ['BTC'], event_types: ['trade'], from_seq: 0 });
      const caughtUp = await c.control('caught_up', (x) => x.id === 'btc', CAUGHT_UP_MS);
      await eventually(
        () => c.events.filter((e) => e.seq > (caughtUp.seq as number)).length >= 5,
        60_000,
        '5 live BTC trades after caught_up',
      );
      publishing = false;
      await flow;
      const last = btcSeqs.at(-1) as number;
      await eventually(() => c.events.some((e) => e.seq === last), 30_000, `the last BTC trade, ${last}`);
      expect(c.events.map((e) => e.seq)).toEqual(btcSeqs);
      await c.close();
    } finally {
      publishing = false;
      await flow;
      await small.close();
    }
  }, 120_000);
});
