/**
 * End to end: a real `producer connector --venue hyperliquid --symbols BTC` process reads a local
 * replay of recorded pushes, and a unified stream client filtering `source=hyperliquid` receives
 * its trade and book; when the venue then goes quiet (the connection stays open, nothing comes),
 * the client gets a non-terminal `feed_stale` naming BTC and its source, after the last event.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadScenario } from '../support/connector-harness.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService, stopProcess } from '../support/process.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { startVenueReplay, type VenueReplay } from '../support/venue-replay.ts';

const STALE_MS = 400;
const recorded = loadScenario('hyperliquid-btc-eth.json').sessions[0] ?? [];
// BTC's two subscription answers, then its first trades push and book.
const script = [recorded[0], recorded[1], recorded[4], recorded[5]] as NonNullable<
  (typeof recorded)[number]
>[];

let nats: TestNats;
let gw: TestGateway;
let replay: VenueReplay;
let producer: ServiceProcess | undefined;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url, { COINS: 'BTC', SSE_FEED_STALE_MS: String(STALE_MS) });
  replay = await startVenueReplay({ sessions: [script], subscriptions: 2 });
});

afterAll(async () => {
  if (producer) await stopProcess(producer, 'SIGTERM');
  await gw?.close();
  await replay?.close();
  await nats?.cleanup();
});

it('a venue gone quiet reaches a unified stream client as feed_stale for its coin', async () => {
  const got: (SseMessage & { at: number; body: Record<string, unknown> })[] = [];
  const sse = await openSse(`${gw.url}/api/v1/unified/stream?coin=BTC&source=hyperliquid`, (m) =>
    got.push({ ...m, at: Date.now(), body: JSON.parse(m.data) }),
  );
  expect(sse.status).toBe(200);
  producer = startService(['producer', 'connector', '--venue', 'hyperliquid', '--symbols', 'BTC'], {
    NATS_URL: nats.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: 'connector-test-secret-0123456789',
    HYPERLIQUID_WS_URL: replay.url,
  });
  await producer.waitForLog((l) => l.msg === 'hyperliquid connector started');
  const events = () => got.filter((m) => m.event === 'message');
  await eventually(async () => events().length >= 3, 20_000);
  const lastEventAt = Math.max(...events().map((m) => m.at));
  await eventually(
    async () => got.some((m) => m.event === 'error' && m.body.code === 'feed_stale' && m.at > lastEventAt),
    20_000,
  );
  sse.abort();

  expect(events().map((m) => [m.body.source, m.body.symbol, m.body.event_type])).toEqual([
    ['hyperliquid', 'BTC', 'trade'],
    ['hyperliquid', 'BTC', 'trade'],
    ['hyperliquid', 'BTC', 'book'],
  ]);
  const stale = got.find((m) => m.event === 'error' && m.body.code === 'feed_stale' && m.at > lastEventAt);
  expect(stale?.body).toMatchObject({
    code: 'feed_stale',
    coin: 'BTC',
    source: 'hyperliquid',
    terminal: false,
  });
  expect(replay.connections()).toBe(1);
});
