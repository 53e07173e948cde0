/**
 * The edge guard on the unified stream: missing / malformed / unknown / revoked / valid key ×
 * scope × tier × region → exact status and catalogue code, with the complete error body. And the
 * market-data scope on every transport (unified, JSON-RPC, gRPC unary and streams, disk-sync): a
 * key with scopes but without `stream:read` (the `metrics` key Prometheus holds) reads nothing.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import { buildDisksyncApp, disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { connectSync, refusal } from '../support/disksync.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  collect,
  keyMetadata,
  type PriceClient,
  priceClient,
  startTestGrpc,
  type TestGrpc,
  trailers,
  unary,
} from '../support/grpc.ts';
import { expectError } from '../support/http.ts';
import { post, type RpcAnswer, rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

let base: BaseStack;
let us: TestGateway;
let jp: TestGateway;
let accounts: TestAccounts;
let jsonRpc: TestJsonRpc;
let grpc: TestGrpc;
let grpcClient: PriceClient;
let disksync: { url: string; close(): Promise<void> };
const keys: Record<string, string> = {};

beforeAll(async () => {
  base = await startBase();
  accounts = base.accounts;
  us = await startTestGateway(base.server.url, {}, { guard: 'keys', region: 'us' });
  jp = await startTestGateway(base.server.url, {}, { guard: 'keys', region: 'jp' });
  keys.basic = (await accounts.key('basic')).key;
  keys.pro = (await accounts.key('pro')).key;
  keys.quantJp = (await accounts.key('quant', { jp: true })).key;
  keys.quantNoJp = (await accounts.key('quant')).key;
  keys.regionOnly = (await accounts.key('pro', { scopes: ['region:us'] })).key;
  keys.streamUs = (await accounts.key('pro', { jp: true, scopes: ['stream:read', 'region:us'] })).key;
  keys.streamAny = (await accounts.key('pro', { jp: true, scopes: ['stream:read'] })).key;
  keys.hyperliquid = (await accounts.key('pro', { scopes: ['stream:read', 'chain:hyperliquid'] })).key;
  const revoked = await accounts.key('pro');
  await accounts.service.revokeKey(revoked.accountId, revoked.keyId);
  keys.revoked = revoked.key;
  // Quant keys: every transport's tier admits them, so only their scopes decide.
  keys.metricsOnly = (await accounts.key('quant', { scopes: ['metrics'] })).key;
  keys.statusOnly = (await accounts.key('quant', { scopes: ['status:read'] })).key;
  keys.chainOnly = (await accounts.key('quant', { scopes: ['chain:hyperliquid'] })).key;
  keys.marketData = (await accounts.key('quant', { scopes: ['stream:read'] })).key;
  keys.unscoped = (await accounts.key('quant')).key;
  jsonRpc = await startTestJsonRpc(us.nats, us.config, { guard: 'keys' });
  grpc = await startTestGrpc(us.nats, us.config);
  grpcClient = priceClient(grpc.target);
  disksync = await startDisksync();
});

/** A disk-sync edge in this process behind the real guard (the service's own parts). */
async function startDisksync(): Promise<{ url: string; close(): Promise<void> }> {
  const log = createLogger('silent');
  const edge = await startEdgeGuard(us.nats, us.config, log);
  const leases = await KeyLeases.open(us.nats, us.config.DISKSYNC_LEASE_TTL_MS);
  const app = buildDisksyncApp({
    nats: us.nats,
    tail: us.tail,
    guard: edge.guard,
    leases,
    log: log,
    region: 'us',
    settings: disksyncSettings(us.config),
  });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url: address.replace(/^http/, 'ws'),
    async close() {
      await app.shutdown();
      await edge.part.stop();
    },
  };
}

afterAll(async () => {
  grpcClient?.close();
  await grpc?.close();
  await jsonRpc?.close();
  await disksync?.close();
  await us?.close();
  await jp?.close();
  await base?.close();
});

const open = async (gw: TestGateway, headers: Record<string, string>, query = '') => {
  const ctl = new AbortController();
  const res = await fetch(`${gw.url}/api/v1/unified/stream${query}`, { headers, signal: ctl.signal });
  return { res, close: () => ctl.abort() };
};

/** The key with its last (checksum) character replaced by a different one: never the original. */
function corruptChecksum(key: string): string {
  const last = key.at(-1);
  return `${key.slice(0, -1)}${last === '0' ? '1' : '0'}`;
}

describe('401: who are you', () => {
  it.each([
    ['no key', {}, 'invalid_key'],
    ['a malformed key', { 'x-api-key': 'mdp_not-a-key' }, 'invalid_key'],
    ['a key with a bad checksum', { 'x-api-key': corruptChecksum(generateApiKey()) }, 'invalid_key'],
    ['an unknown well-formed key', { 'x-api-key': generateApiKey() }, 'invalid_key'],
    ['a session token', { authorization: 'Bearer mds_abcdefghijklmnop' }, 'invalid_key'],
  ])('%s → 401 %s', async (_name, headers, code) => {
    const { res } = await open(us, headers as Record<string, string>);
    await expectError(res, 401, code);
    expect(res.headers.get('www-authenticate')).toBeNull();
  });

  it('refuses malformed and mistyped keys without a lookup; an unknown well-formed key needs one', async () => {
    const store = us.keys as NonNullable<TestGateway['keys']>;
    const lookupsFor = async (key: string) => {
      const before = store.lookups;
      await expectError((await open(us, { 'x-api-key': key })).res, 401, 'invalid_key');
      return store.lookups - before;
    };
    const valid = keys.pro as string;
    for (const bad of [
      'mdp_not-a-key',
      corruptChecksum(valid),
      corruptChecksum(generateApiKey()),
      `${valid}x`,
    ])
      expect(await lookupsFor(bad), bad).toBe(0);
    // Positive control: the counter does see the lookups of well-formed keys.
    expect(await lookupsFor(generateApiKey())).toBe(1);
  });

  it('a revoked key → 401 key_revoked', async () => {
    const { res } = await open(us, { 'x-api-key': keys.revoked as string });
    await expectError(res, 401, 'key_revoked');
  });
});

describe('403: not allowed', () => {
  it.each([
    ['a Basic key (unified needs Pro+)', 'us', 'basic', 'tier_restricted'],
    ['a plan without Japan access on JP', 'jp', 'quantNoJp', 'tier_restricted'],
    ['scopes without stream:read', 'us', 'regionOnly', 'forbidden'],
    ['region:us scope on JP', 'jp', 'streamUs', 'forbidden'],
  ])('%s → 403 %s', async (_name, region, key, code) => {
    const { res } = await open(region === 'us' ? us : jp, { 'x-api-key': keys[key] as string });
    await expectError(res, 403, code);
  });

  it('a chain-scoped key asking for another source → 403 forbidden', async () => {
    const { res } = await open(us, { 'x-api-key': keys.hyperliquid as string }, '?source=binance');
    await expectError(res, 403, 'forbidden');
  });
});

describe('200: allowed', () => {
  it.each([
    ['Pro via x-api-key', 'us', 'pro', 'x-api-key'],
    ['Pro via Bearer', 'us', 'pro', 'bearer'],
    ['Quant with Japan access on JP', 'jp', 'quantJp', 'x-api-key'],
    ['stream:read on JP (no region scope)', 'jp', 'streamAny', 'x-api-key'],
    ['stream:read + region:us on US', 'us', 'streamUs', 'x-api-key'],
    ['chain:hyperliquid, own source', 'us', 'hyperliquid', 'x-api-key'],
  ])('%s', async (_name, region, key, carrier) => {
    const k = keys[key] as string;
    const headers: Record<string, string> =
      carrier === 'bearer' ? { authorization: `Bearer ${k}` } : { 'x-api-key': k };
    const { res, close } = await open(region === 'us' ? us : jp, headers);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    if (key !== 'quantJp') expect(Number(res.headers.get('x-ratelimit-limit'))).toBe(2_000);
    close();
  });
});

/**
 * Every transport's market-data read, as a key with scopes sees it: `stream:read` is the one scope
 * that reads the market; `metrics`, `status:read` or `chain:*` alone read nothing (403 /
 * PERMISSION_DENIED / close 1008, `forbidden`); a key without scopes reads everything its tier allows.
 */
describe('market data needs stream:read on every transport when the key has scopes', () => {
  const refused = ['metricsOnly', 'statusOnly', 'chainOnly'];
  const admitted = ['marketData', 'unscoped'];

  it.each(refused)('unified: %s → 403 forbidden', async (key) => {
    await expectError((await open(us, { 'x-api-key': keys[key] as string })).res, 403, 'forbidden');
  });

  const rpcCalls = [
    rpc('md_l2Book', ['BTC']),
    rpc('md_trades', ['BTC']),
    rpc('md_midPrice', ['BTC']),
    rpc('md_coins'),
    rpc('md_newFilter', [{}]),
    rpc('eth_blockNumber'),
  ];
  it.each(refused)('JSON-RPC: %s → HTTP 403, -32002 forbidden, for every method', async (key) => {
    for (const body of rpcCalls) {
      const res = await post(jsonRpc.url, body, { 'x-api-key': keys[key] as string });
      expect(res.status, `${body.method}: ${res.text}`).toBe(403);
      expect((res.json as RpcAnswer).error).toMatchObject({ code: -32002, data: { error: 'forbidden' } });
    }
  });

  it.each(admitted)('JSON-RPC: %s is admitted', async (key) => {
    const res = await post(jsonRpc.url, rpc('eth_blockNumber'), { 'x-api-key': keys[key] as string });
    expect(res.status, res.text).toBe(200);
    expect((res.json as RpcAnswer).result).toMatch(/^0x/);
  });

  const unaryCalls: [string, Record<string, unknown>][] = [
    ['GetBook', { coin: 'BTC' }],
    ['GetMidPrice', { coin: 'BTC' }],
    ['GetBlockNumber', {}],
  ];
  it.each(refused)('gRPC: %s → PERMISSION_DENIED forbidden, unary and streaming', async (key) => {
    const md = () => keyMetadata(keys[key] as string);
    for (const [method, req] of unaryCalls) {
      const r = await unary(grpcClient, method, req, md());
      expect(r.error?.code, method).toBe(status.PERMISSION_DENIED);
      expect(trailers(r.error)['x-error-code'], method).toBe('forbidden');
    }
    const stream = collect(grpcClient.StreamEvents({}, md()));
    const ended = await stream.ended;
    expect(ended?.code).toBe(status.PERMISSION_DENIED);
    expect(trailers(ended ?? undefined)['x-error-code']).toBe('forbidden');
    expect(stream.messages).toEqual([]);
  });

  it.each(admitted)('gRPC: %s is admitted', async (key) => {
    const r = await unary(grpcClient, 'GetBlockNumber', {}, keyMetadata(keys[key] as string));
    expect(r.error).toBeUndefined();
    expect(r.value?.hex).toMatch(/^0x/);
  });

  it.each(refused)('disk-sync: %s → close 1008 with the forbidden error', async (key) => {
    const c = connectSync(disksync.url, { key: keys[key] as string });
    const r = await refusal(c);
    expect(r.code).toBe(1008);
    expect(r.error).toMatchObject({ code: 'forbidden' });
  });
});
