/**
 * The gRPC and disk-sync edges report feeds already stale when a client connects per
 * (source, coin), as the unified stream does: with SOL published once by `synthetic` and once by
 * `hyperliquid`, then silent past the threshold (the live tail's health says both feeds are stale),
 * a gRPC StreamEvents of SOL and a disk-sync subscription of SOL each get one `feed_stale` warning
 * per source, naming it (the proto's Warning.source), before anything else; a stream taking only
 * `hyperliquid` gets only that one. Before, each got one warning for SOL naming no source.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MarketEvent } from '../../contracts/events.ts';
import { openGuard } from '../../gateways/core/guard.ts';
import { LatestState } from '../../gateways/core/latest-state.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildDisksyncApp, type DisksyncApp, disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { buildGrpcApp, type GrpcApp } from '../../gateways/grpc/app.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { connectSync, type SyncClient } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { collect, keyMetadata, type PriceClient, priceClient } from '../support/grpc.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishNow, trade } from '../support/publisher.ts';

const STALE_MS = 300;
const config = testConfig({ COINS: 'SOL', SSE_FEED_STALE_MS: String(STALE_MS) });
let server: TestNats;
let nats: Nats;
let tail: LiveTail;
let latest: LatestState;
let grpc: GrpcApp;
let client: PriceClient;
let disksync: DisksyncApp;
let syncUrl: string;
const syncClients: SyncClient[] = [];

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  const log = createLogger(config.LOG_LEVEL, 'gateway');
  tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: STALE_MS,
    expectedCoins: ['SOL'],
  });
  latest = await LatestState.start(nats, tail, log);
  grpc = buildGrpcApp({ config, nats, tail, latest, guard: openGuard, log, region: 'us' });
  client = priceClient(`127.0.0.1:${await grpc.listen('127.0.0.1', 0)}`);
  const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
  disksync = buildDisksyncApp({
    nats,
    tail,
    leases,
    log,
    guard: openGuard,
    region: 'us',
    settings: disksyncSettings(config),
  });
  syncUrl = (await disksync.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');

  const events: MarketEvent[] = [trade('SOL', 1), { ...trade('SOL', 2), source: 'hyperliquid' }];
  await publishNow(nats.js, events);
  await eventually(
    () => tail.health.staleFeeds('SOL').length === 2,
    10_000,
    'both feeds of SOL stale in the tail',
  );
}, 60_000);

afterAll(async () => {
  for (const c of syncClients) c.ws.terminate();
  client?.close();
  await disksync?.shutdown();
  await grpc?.shutdown();
  latest?.stop();
  tail?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

type Stale = { code: string; coin?: string; source?: string };
const sourcesOf = (ws: Stale[]) => ws.map((w) => `${w.coin}/${w.source ?? '-'}`).sort();

it('gRPC StreamEvents: one feed_stale per stale (source, coin) on connect', async () => {
  const all = collect(client.StreamEvents({ coins: ['SOL'] }, keyMetadata(null)));
  const one = collect(client.StreamEvents({ coins: ['SOL'], sources: ['hyperliquid'] }, keyMetadata(null)));
  const staleOf = (m: Record<string, unknown>[]) =>
    m.flatMap((x) => (x.warning && (x.warning as Stale).code === 'feed_stale' ? [x.warning as Stale] : []));
  await eventually(() => staleOf(all.messages).length >= 2, 10_000, 'two feed_stale warnings');
  await eventually(() => staleOf(one.messages).length >= 1, 10_000, 'a feed_stale warning');
  expect(sourcesOf(staleOf(all.messages))).toEqual(['SOL/hyperliquid', 'SOL/synthetic']);
  expect(sourcesOf(staleOf(one.messages))).toEqual(['SOL/hyperliquid']);
  all.call.cancel();
  one.call.cancel();
});

it('disk-sync subscribe: one feed_stale per stale (source, coin) on connect', async () => {
  const all = connectSync(syncUrl);
  const one = connectSync(syncUrl);
  syncClients.push(all, one);
  all.send({ op: 'subscribe', id: 'a', coins: ['SOL'] });
  one.send({ op: 'subscribe', id: 'h', coins: ['SOL'], sources: ['hyperliquid'] });
  const staleOf = (c: SyncClient) =>
    c.controls.filter((x) => x.type === 'warning' && x.code === 'feed_stale') as unknown as Stale[];
  await eventually(() => staleOf(all).length >= 2, 10_000, 'two feed_stale warnings');
  await eventually(() => staleOf(one).length >= 1, 10_000, 'a feed_stale warning');
  await all.control('caught_up');
  await one.control('caught_up');
  expect(sourcesOf(staleOf(all))).toEqual(['SOL/hyperliquid', 'SOL/synthetic']);
  expect(sourcesOf(staleOf(one))).toEqual(['SOL/hyperliquid']);
});
