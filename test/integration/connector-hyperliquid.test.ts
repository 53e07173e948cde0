/**
 * The Hyperliquid connector against a local replay of recorded pushes (test/fixtures/connectors/
 * hyperliquid-btc-eth.json): MD holds exactly the expected canonical events, event by event,
 * under the venue's ids, through a dropped connection (the venue's replay of recent trades after
 * resubscribing publishes only the one trade missed), duplicated frames, the book pushes lost
 * while away (each l2Book is a whole snapshot: the next one is complete) and a frame in a changed
 * format (refused naming the field, counted, no crash). A restart replaying the same frames
 * stores nothing new.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectorFormatErrors, connectorFrames, connectorReconnects } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type Connector, startConnector } from '../../producers/connectors/connector.ts';
import {
  capturingLogger,
  collectMd,
  connectorSettings,
  counterValue,
  expectRestartStoresNothing,
  expectStoredAsExpected,
  handedOver,
  loadScenario,
} from '../support/connector-harness.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { startVenueReplay, type VenueReplay } from '../support/venue-replay.ts';

const fx = loadScenario('hyperliquid-btc-eth.json');
const expectedCount = Object.values(fx.expected).reduce((n, list) => n + list.length, 0);
const COINS = ['BTC', 'ETH'];
const { log, lines } = capturingLogger();
let nats: TestNats;
let conn: Nats;
let md: ReturnType<typeof collectMd>;
let replay: VenueReplay;
let connector: Connector;

const settings = (wsUrl: string) => connectorSettings({ HYPERLIQUID_WS_URL: wsUrl });

beforeAll(async () => {
  nats = await startTestNats();
  conn = await connectTestNats(nats.url, testConfig());
  md = collectMd(conn, 'md.hyperliquid.*.*', log);
  replay = await startVenueReplay({ sessions: fx.sessions, subscriptions: 4 });
  connector = startConnector(conn, 'hyperliquid', COINS, settings(replay.url), log);
});

afterAll(async () => {
  await connector?.stop();
  md?.stop();
  await replay?.close();
  await conn?.nc.close();
  await nats?.cleanup();
});

it('stores exactly the expected canonical events, per subject and in order, under the venue-derived ids', async () => {
  await replay.replayed(2);
  await eventually(async () => (await handedOver('hyperliquid')) >= expectedCount, 20_000);
  await connector.drained();
  await eventually(async () => md.events.length >= expectedCount);
  expectStoredAsExpected(md, fx);
});

it('subscribes to trades and l2Book per coin on every connection, and reconnected once', async () => {
  const subscriptions = COINS.flatMap((coin) =>
    ['trades', 'l2Book'].map((type) => ({ method: 'subscribe', subscription: { type, coin } })),
  );
  expect(replay.connections()).toBe(2);
  for (const messages of replay.received)
    expect(messages.slice(0, 4).map((m) => JSON.parse(m))).toEqual(subscriptions);
  expect(await counterValue(connectorReconnects, { venue: 'hyperliquid' })).toBe(1);
});

it('drops duplicated frames and replayed trades without publishing them', async () => {
  // The duplicated trades frame, the repeated book, and the last book pushed again on resubscribe.
  expect(await counterValue(connectorFrames, { venue: 'hyperliquid', outcome: 'duplicate' })).toBe(3);
});

it('refuses the frame in a changed format with an error naming the field, counted, and carries on', async () => {
  expect(await counterValue(connectorFormatErrors, { venue: 'hyperliquid', field: 'data[].side' })).toBe(1);
  const refused = lines.filter((l) => l.field === 'data[].side');
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ venue: 'hyperliquid', code: 'invalid_value' });
  expect(String(refused[0]?.err)).toBe('data[0].side must be "B" or "A", got "X"');
});

it('a second connector replaying the same frames (a restart) stores nothing new', async () => {
  await expectRestartStoresNothing({
    venue: 'hyperliquid',
    fx,
    subscriptions: 4,
    handed: expectedCount,
    md,
    start: (url) => startConnector(conn, 'hyperliquid', COINS, settings(url), log),
  });
});
