/**
 * The Binance connector against a local replay of recorded frames (test/fixtures/connectors/
 * binance-btcusdt.json) and a local REST snapshot server: MD holds exactly the expected canonical
 * events, event by event, under the venue's ids, through a dropped connection, duplicated and
 * replayed frames, a sequence gap (resynced from a new snapshot, logged and counted) and a frame
 * in a changed format (refused naming the field, counted, no crash). A second connector replaying
 * the same frames (a restart) stores nothing new.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  connectorFormatErrors,
  connectorFrames,
  connectorReconnects,
  connectorResyncs,
} from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type Connector, startConnector } from '../../producers/connectors/connector.ts';
import {
  capturingLogger,
  collectMd,
  connectorSettings,
  counterValue,
  expectRestartStoresNothing,
  expectStoredAsExpected,
  loadScenario,
} from '../support/connector-harness.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import {
  type SnapshotServer,
  startSnapshotServer,
  startVenueReplay,
  type VenueReplay,
} from '../support/venue-replay.ts';

const fx = loadScenario('binance-btcusdt.json');
const expectedCount = Object.values(fx.expected).reduce((n, list) => n + list.length, 0);
const { log, lines } = capturingLogger();
let nats: TestNats;
let conn: Nats;
let md: ReturnType<typeof collectMd>;
let snapshots: SnapshotServer;
let replay: VenueReplay;
let connector: Connector;

const settings = (wsUrl: string) =>
  connectorSettings({
    BINANCE_WS_URL: wsUrl,
    BINANCE_REST_URL: snapshots.url,
    CONNECTOR_BOOK_DEPTH: fx.book_depth ?? 20,
  });

beforeAll(async () => {
  nats = await startTestNats();
  conn = await connectTestNats(nats.url, testConfig());
  md = collectMd(conn, 'md.binance.*.*', log);
  snapshots = await startSnapshotServer(fx.snapshots ?? {});
  replay = await startVenueReplay({
    sessions: fx.sessions,
    subscriptions: 1,
    waits: {
      first_book: () => eventually(async () => md.events.some((e) => e.event.event_type === 'book'), 20_000),
    },
  });
  connector = startConnector(conn, 'binance', ['BTCUSDT'], settings(replay.url), log);
});

afterAll(async () => {
  await connector?.stop();
  md?.stop();
  await replay?.close();
  await snapshots?.close();
  await conn?.nc.close();
  await nats?.cleanup();
});

it('stores exactly the expected canonical events, per subject and in order, under the venue-derived ids', async () => {
  await replay.replayed(2);
  await eventually(async () => md.events.length >= expectedCount, 20_000);
  await connector.drained();
  expectStoredAsExpected(md, fx);
});

it('subscribed with one SUBSCRIBE per connection, reconnected once, and fetched one snapshot per sync', async () => {
  expect(replay.connections()).toBe(2);
  for (const messages of replay.received)
    expect(JSON.parse(messages[0] as string)).toEqual({
      method: 'SUBSCRIBE',
      params: ['btcusdt@trade', 'btcusdt@depth@100ms'],
      id: 1,
    });
  expect(await counterValue(connectorReconnects, { venue: 'binance' })).toBe(1);
  expect(snapshots.served('BTCUSDT')).toBe(2);
});

it('logs and counts the gap as a resync, and drops duplicated and replayed frames without publishing', async () => {
  expect(await counterValue(connectorResyncs, { venue: 'binance', reason: 'gap' })).toBe(1);
  const resync = lines.filter((l) => l.msg === 'binance book dropped; resyncing from a snapshot');
  expect(resync).toHaveLength(1);
  expect(resync[0]).toMatchObject({
    venue: 'binance',
    symbol: 'BTCUSDT',
    reason: 'gap',
    expected: 1009,
    got: 1012,
  });
  expect(await counterValue(connectorFrames, { venue: 'binance', outcome: 'duplicate' })).toBe(4);
});

it('refuses the frame in a changed format with an error naming the field, counted, and carries on', async () => {
  expect(await counterValue(connectorFormatErrors, { venue: 'binance', field: 'p' })).toBe(1);
  const refused = lines.filter((l) => l.field === 'p');
  expect(refused).toHaveLength(1);
  expect(refused[0]).toMatchObject({ venue: 'binance', code: 'missing_field', err: 'p is missing' });
  expect(String(refused[0]?.msg)).toContain('field p');
});

it('a second connector replaying the same frames (a restart) stores nothing new', async () => {
  // Its four trades, and the book at u 1015 rebuilt from the same last snapshot: the same ids.
  await expectRestartStoresNothing({
    venue: 'binance',
    fx,
    subscriptions: 1,
    handed: 5,
    md,
    start: (url) => startConnector(conn, 'binance', ['BTCUSDT'], settings(url), log),
  });
});
