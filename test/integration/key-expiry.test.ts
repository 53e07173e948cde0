/**
 * Keys that expire (issue 27): a key may be created with an `expires_at` (in the future; a key with
 * `status:admin` always expires, at most `ADMIN_KEY_MAX_TTL_S` after its creation). Past it, every
 * transport answers as for a revoked key with the reason `key_expired`: new requests are 401 /
 * -32001 / UNAUTHENTICATED / close 4002, and streams open at that moment end then (SSE
 * `auth_expired` with `reason: key_expired`, gRPC UNAUTHENTICATED, disk-sync 4002), without waiting
 * for any later check.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { buildDisksyncApp, disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { connectSync, refusal } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway, testConfig } from '../support/gateway.ts';
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
import { openSse, type SseMessage } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const ADMIN_MAX_S = 3_600;
let base: BaseStack;
let us: TestGateway;
let accounts: TestAccounts;
let jsonRpc: TestJsonRpc;
let grpc: TestGrpc;
let grpcClient: PriceClient;
let disksync: { url: string; close(): Promise<void> };
let quantAccount: string;

beforeAll(async () => {
  const env = { ADMIN_KEY_MAX_TTL_S: String(ADMIN_MAX_S) };
  base = await startBase(testConfig(env));
  accounts = base.accounts;
  us = await startTestGateway(base.server.url, env, { guard: 'keys' });
  quantAccount = (await accounts.key('quant')).accountId;
  jsonRpc = await startTestJsonRpc(us.nats, us.config, { guard: 'keys' });
  grpc = await startTestGrpc(us.nats, us.config);
  grpcClient = priceClient(grpc.target);
  const log = createLogger('silent');
  const edge = await startEdgeGuard(us.nats, us.config, log);
  const leases = await KeyLeases.open(us.nats, us.config.DISKSYNC_LEASE_TTL_MS);
  const app = buildDisksyncApp({
    nats: us.nats,
    tail: us.tail,
    guard: edge.guard,
    leases,
    log,
    region: 'us',
    settings: disksyncSettings(us.config),
  });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  disksync = {
    url: address.replace(/^http/, 'ws'),
    async close() {
      await app.shutdown();
      await edge.part.stop();
    },
  };
}, 60_000);

afterAll(async () => {
  grpcClient?.close();
  await grpc?.close();
  await jsonRpc?.close();
  await disksync?.close();
  await us?.close();
  await base?.close();
});

const keyExpiringIn = (ms: number) =>
  accounts.service.createKey(quantAccount, {
    name: 'expiring',
    scopes: [],
    expires_at: new Date(Date.now() + ms).toISOString(),
  });

describe('creating a key with an expiry', () => {
  it('refuses an expires_at not in the future (422)', async () => {
    const past = new Date(Date.now() - 1_000).toISOString();
    await expect(
      accounts.service.createKey(quantAccount, { name: 'late', scopes: [], expires_at: past }),
    ).rejects.toMatchObject({ code: 'unprocessable', details: { field: 'expires_at' } });
  });

  it('gives a status:admin key at most ADMIN_KEY_MAX_TTL_S (that much when none is sent)', async () => {
    const email = `ops-${Date.now()}@example.com`;
    const { account_id } = await accounts.service.register({
      email,
      password: 'Str0ng-Passw0rd!',
      plan: 'pro',
      jp_access: false,
    });
    await accounts.grantOperator(email);
    const admin = await accounts.service.createKey(account_id, { name: 'ops', scopes: ['status:admin'] });
    expect(admin.expires_at).toBe(admin.created_at + ADMIN_MAX_S * 1_000);
    const tooLong = new Date(Date.now() + (ADMIN_MAX_S + 60) * 1_000).toISOString();
    await expect(
      accounts.service.createKey(account_id, { name: 'ops2', scopes: ['status:admin'], expires_at: tooLong }),
    ).rejects.toMatchObject({ code: 'unprocessable', details: { field: 'expires_at', limit: ADMIN_MAX_S } });
    // A key without an expiry cannot be given status:admin later.
    const plain = await accounts.service.createKey(account_id, { name: 'plain', scopes: [] });
    expect(plain.expires_at).toBeNull();
    await expect(
      accounts.service.updateKey(account_id, plain.key_id, { scopes: ['status:admin'] }),
    ).rejects.toMatchObject({ code: 'unprocessable' });
  });
});

describe('past its expiry a key answers as a revoked one, reason key_expired', () => {
  it('ends the streams open at that moment: SSE auth_expired, gRPC UNAUTHENTICATED, disk-sync 4002', async () => {
    const created = await keyExpiringIn(2_500);
    const expiresAt = created.expires_at as number;
    const key = created.key;

    const sse: (SseMessage & { at: number })[] = [];
    const s = await openSse(`${us.url}/api/v1/unified/stream`, (m) => sse.push({ ...m, at: Date.now() }), {
      'x-api-key': key,
    });
    expect(s.status).toBe(200);
    const g = collect(grpcClient.StreamEvents({}, keyMetadata(key)));
    await new Promise((r) => g.call.once('metadata', r));
    const d = connectSync(disksync.url, { key });
    d.send({ op: 'ping' });
    await d.control('pong');

    const [gEnded, dClosed] = await Promise.all([g.ended, refusal(d), s.done]);
    const gAt = Date.now();
    const terminal = sse.find((m) => m.event === 'error');
    expect(JSON.parse(terminal?.data ?? '{}')).toMatchObject({
      code: 'auth_expired',
      reason: 'key_expired',
      terminal: true,
    });
    expect(terminal?.at).toBeGreaterThanOrEqual(expiresAt);
    expect(gEnded?.code).toBe(status.UNAUTHENTICATED);
    expect(trailers(gEnded ?? undefined)['x-error-code']).toBe('key_expired');
    expect(gAt).toBeGreaterThanOrEqual(expiresAt);
    expect(dClosed.code).toBe(4002);
    expect(dClosed.error).toMatchObject({ code: 'key_expired', close_code: 4002 });
  }, 60_000);

  it('refuses new requests on every transport with 401 key_expired', async () => {
    const created = await keyExpiringIn(1_000);
    const key = created.key;
    // Before: admitted.
    expect((await unary(grpcClient, 'GetBlockNumber', {}, keyMetadata(key))).error).toBeUndefined();
    await eventually(async () => Date.now() > (created.expires_at as number), 10_000, 'the expiry');

    const body = await expectError(
      await fetch(`${us.url}/api/v1/unified/stream`, { headers: { 'x-api-key': key } }),
      401,
      'key_expired',
    );
    expect(body.message).toContain('expired');
    const res = await post(jsonRpc.url, rpc('eth_blockNumber'), { 'x-api-key': key });
    expect(res.status).toBe(401);
    expect((res.json as RpcAnswer).error).toMatchObject({ code: -32001, data: { error: 'key_expired' } });
    const r = await unary(grpcClient, 'GetBlockNumber', {}, keyMetadata(key));
    expect(r.error?.code).toBe(status.UNAUTHENTICATED);
    expect(trailers(r.error)['x-error-code']).toBe('key_expired');
    const refused = await refusal(connectSync(disksync.url, { key }));
    expect(refused).toMatchObject({ code: 4002, error: { code: 'key_expired' } });
  }, 60_000);
});
