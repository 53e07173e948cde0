/**
 * Connectors restarted after JetStream's duplicate window has passed (MD keeps message ids for 1 s
 * here, and each restart waits until a probe id is accepted again: JetStream alone would store a
 * replayed event twice). Per venue, from the recorded scenarios of connector-binance.test.ts and
 * connector-hyperliquid.test.ts:
 * 1. a connector reads the first connection's frames only, and is stopped;
 * 2. a new one reads every connection, its venue replaying from the start what the first had
 *    published (Hyperliquid: trades at one time with two tids; Binance: the book rebuilt from the
 *    first snapshot): MD holds every expected event exactly once, as after one uninterrupted run;
 * 3. a third one reading everything again stores nothing.
 */
import { nanos } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorFrames } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type ConnectorVenue, startConnector } from '../../producers/connectors/connector.ts';
import {
  capturingLogger,
  collectMd,
  connectorSettings,
  counterValue,
  expectStoredAsExpected,
  loadScenario,
  type Scenario,
} from '../support/connector-harness.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { storedCount } from '../support/stored-seqs.ts';
import { type ScriptEntry, startSnapshotServer, startVenueReplay } from '../support/venue-replay.ts';

const DUPLICATE_WINDOW_MS = 1_000;
const PROBE_SUBJECT = 'md.probe.PROBE.trade';
const { log, lines } = capturingLogger();
let nats: TestNats;
let conn: Nats;
let probes = 0;

beforeAll(async () => {
  nats = await startTestNats();
  conn = await connectTestNats(nats.url, testConfig());
  await conn.jsm.streams.update('MD', { duplicate_window: nanos(DUPLICATE_WINDOW_MS) });
  const { config } = await conn.jsm.streams.info('MD');
  expect(config.duplicate_window).toBe(nanos(DUPLICATE_WINDOW_MS));
});

afterAll(async () => {
  await conn?.nc.close();
  await nats?.cleanup();
});

/** Resolves once JetStream stores an id it stored before: every earlier id is out of its window. */
async function duplicateWindowPassed(): Promise<void> {
  const msgID = `probe-${++probes}`;
  await conn.js.publish(PROBE_SUBJECT, '', { msgID });
  await eventually(
    async () => !(await conn.js.publish(PROBE_SUBJECT, '', { msgID })).duplicate,
    30_000,
    'the duplicate window to pass',
  );
}

/** Frames the connector counted for `venue`, whatever their outcome. */
async function framesCounted(venue: string): Promise<number> {
  const { values } = await connectorFrames.get();
  return values.filter((v) => v.labels.venue === venue).reduce((n, v) => n + v.value, 0);
}

const framesOf = (sessions: ScriptEntry[][]) =>
  sessions.flat().filter((f) => !(typeof f === 'object' && !Array.isArray(f) && '$wait' in f)).length;

type Case = { venue: ConnectorVenue; fixture: string; symbols: string[]; subscriptions: number };

describe.each<Case>([
  { venue: 'hyperliquid', fixture: 'hyperliquid-btc-eth.json', symbols: ['BTC', 'ETH'], subscriptions: 4 },
  { venue: 'binance', fixture: 'binance-btcusdt.json', symbols: ['BTCUSDT'], subscriptions: 1 },
])('$venue', ({ venue, fixture, symbols, subscriptions }) => {
  const fx: Scenario = loadScenario(fixture);
  const expectedCount = Object.values(fx.expected).reduce((n, list) => n + list.length, 0);
  const filter = `md.${venue}.*.*`;
  let md: ReturnType<typeof collectMd>;

  beforeAll(() => {
    md = collectMd(conn, filter, log);
  });
  afterAll(() => md?.stop());

  /** MD as the collector sees it, once it has read everything stored under the venue. */
  const settled = async (): Promise<number> => {
    const stored = await storedCount(conn, 'MD', filter);
    await eventually(async () => md.events.length === stored, 20_000, 'the MD reader to catch up');
    return stored;
  };

  /**
   * One connector over a fresh replay of `sessions` (and a fresh snapshot server), stopped once it
   * has counted every frame, `until` holds and its events are stored. Returns what it stored.
   */
  async function run(sessions: ScriptEntry[][], until: () => boolean = () => true): Promise<number> {
    const synced = () => lines.filter((l) => l.msg === 'binance book synced from snapshot').length;
    const syncedBefore = synced();
    const framesBefore = await framesCounted(venue);
    const snapshots = await startSnapshotServer(fx.snapshots ?? {});
    const replay = await startVenueReplay({
      sessions,
      subscriptions,
      // Binance: the rest of the script once the book is synced from this run's first snapshot.
      waits: { first_book: () => eventually(async () => synced() > syncedBefore, 20_000, 'a book sync') },
    });
    const settings = connectorSettings({
      BINANCE_WS_URL: replay.url,
      BINANCE_REST_URL: snapshots.url,
      HYPERLIQUID_WS_URL: replay.url,
      CONNECTOR_BOOK_DEPTH: fx.book_depth ?? 20,
    });
    const connector = startConnector(conn, venue, symbols, settings, log);
    try {
      await replay.replayed(sessions.length);
      const frames = framesOf(sessions);
      await eventually(
        async () => (await framesCounted(venue)) - framesBefore >= frames && until(),
        20_000,
        `${venue}: ${frames} frames read`,
      );
      await connector.drained();
      return connector.stored();
    } finally {
      await connector.stop();
      await replay.close();
      await snapshots.close();
    }
  }

  it('a restart past the duplicate window, its venue replaying what was published, stores every event once', async () => {
    const first = await run(fx.sessions.slice(0, 1));
    expect(await settled()).toBe(first);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(expectedCount);

    await duplicateWindowPassed();
    const duplicatesBefore = await counterValue(connectorFrames, { venue, outcome: 'duplicate' });
    const second = await run(fx.sessions, () => md.events.length >= expectedCount);
    expect(second).toBe(expectedCount - first);
    expect(await settled()).toBe(expectedCount);
    expectStoredAsExpected(md, fx);
    // The first connection's frames, replayed, were dropped as duplicates (counted per venue).
    const duplicates =
      (await counterValue(connectorFrames, { venue, outcome: 'duplicate' })) - duplicatesBefore;
    expect(duplicates).toBeGreaterThan(0);
  });

  it('a third start, its venue replaying everything, stores nothing', async () => {
    await duplicateWindowPassed();
    expect(await run(fx.sessions)).toBe(0);
    expect(await settled()).toBe(expectedCount);
    expectStoredAsExpected(md, fx);
  });
});
