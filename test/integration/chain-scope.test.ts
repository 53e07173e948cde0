/**
 * What a `chain:*` key receives (issue 28): the platform publishes synthetic and Hyperliquid events
 * (BTC and ETH on `md.synthetic.*` and `md.hyperliquid.*`), and a key with scopes
 * ['chain:hyperliquid', 'stream:read'] that names no source receives only the Hyperliquid ones,
 * every one of them: on SSE, gRPC StreamEvents and the bidirectional Stream, disk-sync and JSON-RPC
 * filters, live, resumed from the ring and resumed from JetStream history; `md_trades` answers only
 * Hyperliquid trades and `md_coins` lists only Hyperliquid sources (and no coin only synthetic
 * events came for). A key without scopes, reading the same at the same time, receives both sources:
 * the synthetic events were there to leak.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDisksyncGateway } from '../../app/disksync-gateway.ts';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import type { Scope } from '../../contracts/accounts.ts';
import { createLogger } from '../../platform/logger.ts';
import type { SyncClient } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import {
  bidiReader,
  disksyncReader,
  filterReader,
  rpcResult,
  sseReader,
  streamEventsReader,
} from '../support/feed-readers.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type PriceClient, priceClient, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';
import { type FeedItem, publishPlatform, type Reader, until } from '../support/tenant-isolation.ts';

const RING = 16;
const CHAIN: Scope[] = ['chain:hyperliquid', 'stream:read'];
let stack: TestStack;
let sse: TestGateway;
let grpc: TestGrpc;
let client: PriceClient;
let rpc: TestJsonRpc;
let disksync: { address: string; stop(): Promise<void> };
let guard: { part: { stop(): Promise<void> } };
const clients: SyncClient[] = [];
/** The chain-scoped key's account and an unrestricted one (a key each per disk-sync connection). */
const accountOf = { chain: '', all: '' };
const keys = { chain: '', all: '' };

beforeAll(async () => {
  stack = await startStack({ SSE_RING_SIZE: String(RING) });
  const log = createLogger(stack.config.LOG_LEVEL, 'edges');
  sse = await startTestGateway(stack.server.url, { SSE_RING_SIZE: String(RING) }, { guard: 'keys' });
  grpc = await startTestGrpc(stack.nats, stack.config);
  client = priceClient(grpc.target);
  rpc = await startTestJsonRpc(stack.nats, stack.config, { guard: 'keys' });
  const parts = await startEdgeGuard(stack.nats, stack.config, log);
  guard = parts;
  disksync = await startDisksyncGateway(
    stack.nats,
    { ...stack.config, DISKSYNC_PORT_US: 0, HOST: '127.0.0.1' },
    log,
    'us',
    parts,
  );
  const chain = await stack.accounts.key('quant', { scopes: CHAIN });
  const all = await stack.accounts.key('quant');
  Object.assign(accountOf, { chain: chain.accountId, all: all.accountId });
  Object.assign(keys, { chain: chain.key, all: all.key });
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  client?.close();
  await disksync?.stop();
  await guard?.part.stop();
  await rpc?.close();
  await grpc?.close();
  await sse?.close();
  await stack?.close();
});

type Who = 'chain' | 'all';
type Open = (who: Who, after: number | null) => Promise<Reader>;

/** A fresh key of the account, with the same scopes (disk-sync: one connection per key). */
const freshKey = async (who: Who) =>
  (
    await stack.accounts.service.createKey(accountOf[who], {
      name: `disksync ${clients.length}`,
      scopes: who === 'chain' ? CHAIN : [],
    })
  ).key;

const transports: { name: string; open: Open }[] = [
  { name: 'SSE', open: (who, after) => sseReader(sse.url, { 'x-api-key': keys[who] }, after) },
  { name: 'gRPC StreamEvents', open: (who, after) => streamEventsReader(client, keys[who], after) },
  { name: 'gRPC Stream', open: (who, after) => bidiReader(client, keys[who], after) },
  {
    name: 'disk-sync json',
    open: async (who, after) => disksyncReader(disksync.address, await freshKey(who), after, 'json', clients),
  },
  {
    name: 'disk-sync msgpack',
    open: async (who, after) =>
      disksyncReader(disksync.address, await freshKey(who), after, 'msgpack', clients),
  },
  { name: 'JSON-RPC filters', open: (who, after) => filterReader(rpc.url, keys[who], after) },
];

/** Synthetic and Hyperliquid BTC and ETH trades, `synthetic` extra synthetic ones in the middle, a Hyperliquid one last. */
async function publishMixed(synthetic: number): Promise<{ hyperliquid: string[]; last: string }> {
  const hyperliquid: string[] = [];
  for (const coin of ['BTC', 'ETH']) {
    await publishPlatform(stack.nats.js, 1, { coin });
    hyperliquid.push(await publishPlatform(stack.nats.js, 1, { coin, source: 'hyperliquid' }));
  }
  await publishPlatform(stack.nats.js, synthetic);
  const last = await publishPlatform(stack.nats.js, 1, { source: 'hyperliquid' });
  return { hyperliquid: [...hyperliquid, last], last };
}

const sources = (r: Reader) => [...new Set(r.got.map((e) => e.source))].sort();
const idsOf = (r: Reader, source: string) => r.got.filter((e) => e.source === source).map((e) => e.trade_id);

describe.each(transports)('a chain:hyperliquid key on $name', ({ open }) => {
  it.each(['live', 'ring', 'history'] as const)('receives only Hyperliquid events (%s)', async (phase) => {
    let chain: Reader;
    let all: Reader;
    let published: { hyperliquid: string[]; last: string };
    if (phase === 'live') {
      chain = await open('chain', null);
      all = await open('all', null);
      published = await publishMixed(1);
    } else {
      const from = await lastSeq(stack.nats);
      published = await publishMixed(phase === 'ring' ? 1 : RING * 3);
      const end = await lastSeq(stack.nats);
      await eventually(() => sse.tail.lastSeq >= end && rpc.tail.lastSeq >= end, 10_000, 'the tails');
      // The SSE and JSON-RPC edges' rings (the same size as the gRPC and disk-sync edges').
      for (const tail of [sse.tail, rpc.tail])
        if (phase === 'ring') expect(tail.coveredFrom).toBeLessThanOrEqual(from + 1);
        else expect(tail.coveredFrom).toBeGreaterThan(from + 1);
      chain = await open('chain', from);
      all = await open('all', from);
    }
    await until([chain, all], published.last);
    expect(sources(chain)).toEqual(['hyperliquid']);
    expect(idsOf(chain, 'hyperliquid')).toEqual(published.hyperliquid);
    expect(sources(all)).toEqual(['hyperliquid', 'synthetic']);
    expect(idsOf(all, 'hyperliquid')).toEqual(published.hyperliquid);
  });
});

type Trades = { trades: FeedItem[] };
type Coin = { coin: string; sources: { source: string }[] };

describe('a chain:hyperliquid key on JSON-RPC md_trades and md_coins', () => {
  it('md_trades answers only Hyperliquid trades', async () => {
    const start = Date.now();
    const published = await publishMixed(3);
    const end = Date.now();
    const trades = async (key: string) =>
      ((await rpcResult(rpc.url, key, 'md_trades', ['BTC', start, end])) as Trades).trades;
    const chain = await trades(keys.chain);
    const all = await trades(keys.all);
    expect([...new Set(chain.map((t) => t.source))]).toEqual(['hyperliquid']);
    const btc = published.hyperliquid.filter((id) => id.startsWith('trd_BTC_'));
    expect(chain.map((t) => t.trade_id)).toEqual(btc);
    expect(all.filter((t) => t.source === 'synthetic')).toHaveLength(4);
    // Asking for a source outside the key's chains is refused, not answered empty.
    const answer = await rpcResult(rpc.url, keys.chain, 'md_newFilter', [{ sources: ['synthetic'] }]).catch(
      (err: Error) => err.message,
    );
    expect(answer).toMatch(/"code":-32002/);
  });

  it('md_coins lists only Hyperliquid sources, and no coin only synthetic events came for', async () => {
    await publishPlatform(stack.nats.js, 1, { coin: 'SYNONLY' });
    await publishPlatform(stack.nats.js, 1, { coin: 'BTC', source: 'hyperliquid' });
    const end = await lastSeq(stack.nats);
    await eventually(() => rpc.tail.lastSeq >= end, 10_000, "the JSON-RPC edge's tail");
    const coins = async (key: string) => (await rpcResult(rpc.url, key, 'md_coins', [])) as Coin[];
    const chain = await coins(keys.chain);
    const all = await coins(keys.all);
    const listed = (list: Coin[]) =>
      Object.fromEntries(list.map((c) => [c.coin, c.sources.map((s) => s.source)]));
    expect(listed(all).BTC).toEqual(['hyperliquid', 'synthetic']);
    expect(listed(all).SYNONLY).toEqual(['synthetic']);
    expect(listed(chain).BTC).toEqual(['hyperliquid']);
    expect(listed(chain)).not.toHaveProperty('SYNONLY');
    expect(chain.flatMap((c) => c.sources.map((s) => s.source)).every((s) => s === 'hyperliquid')).toBe(true);
  });
});
