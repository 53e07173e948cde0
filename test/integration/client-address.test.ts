/**
 * Behind a balancer every client keeps its own address (issue 27). Every edge runs with
 * TRUSTED_PROXIES=127.0.0.1 and is reached through relays that act as HAProxy with
 * `send-proxy-v2` (test/support/proxy-relay.ts): "bad" (PROXY header: 203.0.113.7) and "good"
 * (203.0.113.8) share the balancer's address, as every client does behind it.
 * - On `{base_url}`, the unified SSE stream, JSON-RPC, gRPC and disk-sync: keyless requests are
 *   401 and spend nothing; bad keys are 401 until the address's budget is spent, then 429; the
 *   bad address's own valid key is still admitted; the good address is untouched (its valid key
 *   admitted, its bad key a plain 401).
 * - A PROXY header from a peer not in TRUSTED_PROXIES (127.0.0.2) is not believed: its bytes reach
 *   the HTTP/1 parser (400) or the HTTP/2 one (the connection fails), never a limiter; its
 *   `X-Forwarded-For` is ignored, while a trusted hop's is honoured.
 * - Console logins: failures lock the (email, address) pair after 5, so the bad address cannot
 *   lock the user out of the good one; the email alone locks only past 100 failures.
 */
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { generateApiKey } from '../../contracts/api-key-format.ts';
import {
  KEY_FAILURES_PER_ADDRESS,
  LOGIN_BACKOFF_PER_ADDRESS,
  LOGIN_BACKOFF_PER_EMAIL,
  LOGIN_BACKOFF_PER_PAIR,
} from '../../contracts/console-limits.ts';
import { buildDisksyncApp, disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { connectSync, refusal } from '../support/disksync.ts';
import { startTestGateway, type TestGateway, testConfig } from '../support/gateway.ts';
import {
  keyMetadata,
  type PriceClient,
  priceClient,
  startTestGrpc,
  type TestGrpc,
  unary,
} from '../support/grpc.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { rpc, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { type ProxyRelay, startProxyRelay } from '../support/proxy-relay.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const TRUSTED = { TRUSTED_PROXIES: '127.0.0.1' };
const BAD = '203.0.113.7';
const GOOD = '203.0.113.8';
const UNTRUSTED_PEER = '127.0.0.2';

let base: BaseStack;
let unified: TestGateway;
let accounts: TestAccounts;
let http: TestHttp;
let jsonRpc: TestJsonRpc;
let grpc: TestGrpc;
let disksync: { port: number; close(): Promise<void> };
const relays: ProxyRelay[] = [];
/** One valid key for each client: the bad address's neighbour and the good client. */
const keys = { neighbour: '', good: '' };

beforeAll(async () => {
  base = await startBase(testConfig(TRUSTED));
  accounts = base.accounts;
  unified = await startTestGateway(base.server.url, TRUSTED, { guard: 'keys' });
  keys.neighbour = (await accounts.key('quant')).key;
  keys.good = (await accounts.key('quant')).key;
  http = await startTestHttp(unified.nats, unified.config, accounts);
  jsonRpc = await startTestJsonRpc(unified.nats, unified.config, { guard: 'keys' });
  grpc = await startTestGrpc(unified.nats, unified.config);
  disksync = await startDisksync();
}, 60_000);

afterAll(async () => {
  for (const c of grpcClients.values()) c.close();
  for (const r of relays) await r.close();
  await disksync?.close();
  await grpc?.close();
  await jsonRpc?.close();
  await http?.close();
  await unified?.close();
  await base?.close();
});

async function startDisksync(): Promise<{ port: number; close(): Promise<void> }> {
  const log = createLogger('silent');
  const edge = await startEdgeGuard(unified.nats, unified.config, log);
  const leases = await KeyLeases.open(unified.nats, unified.config.DISKSYNC_LEASE_TTL_MS);
  const app = buildDisksyncApp({
    nats: unified.nats,
    tail: unified.tail,
    guard: edge.guard,
    leases,
    log,
    region: 'us',
    settings: disksyncSettings(unified.config),
  });
  const address = await app.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    port: Number(new URL(address).port),
    async close() {
      await app.shutdown();
      await edge.part.stop();
    },
  };
}

async function relay(port: number, opts: { claim?: string; localAddress?: string }): Promise<ProxyRelay> {
  const r = await startProxyRelay(port, opts);
  relays.push(r);
  return r;
}

/** What a client got: admitted, or the catalogue code it was refused with. */
type Outcome = 'admitted' | 'invalid_key' | 'rate_limited' | string;

const byStatus = (status: number): Outcome =>
  status === 200
    ? 'admitted'
    : status === 401
      ? 'invalid_key'
      : status === 429
        ? 'rate_limited'
        : `${status}`;

const keyHeaders = (key: string | null, extra: Record<string, string> = {}): Record<string, string> => ({
  ...(key ? { 'x-api-key': key } : {}),
  ...extra,
});

type Transport = {
  name: string;
  port: () => number;
  probe(relay: ProxyRelay, key: string | null, extra?: Record<string, string>): Promise<Outcome>;
};

const portOf = (url: string) => Number(new URL(url).port);

const transports: Transport[] = [
  {
    name: '{base_url} (HTTP)',
    port: () => portOf(http.url),
    async probe(r, key, extra) {
      const res = await fetch(`${r.url}/mcp/manifest`, { headers: keyHeaders(key, extra) });
      await res.body?.cancel();
      return byStatus(res.status);
    },
  },
  {
    name: 'unified SSE',
    port: () => portOf(unified.url),
    async probe(r, key, extra) {
      const ctl = new AbortController();
      const res = await fetch(`${r.url}/api/v1/unified/stream`, {
        headers: keyHeaders(key, extra),
        signal: ctl.signal,
      });
      ctl.abort();
      return byStatus(res.status);
    },
  },
  {
    name: 'JSON-RPC',
    port: () => portOf(jsonRpc.url),
    async probe(r, key, extra) {
      const res = await fetch(`${r.url}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...keyHeaders(key, extra) },
        body: JSON.stringify(rpc('eth_blockNumber')),
      });
      await res.body?.cancel();
      return byStatus(res.status);
    },
  },
  {
    name: 'gRPC',
    port: () => Number(grpc.target.split(':').pop()),
    async probe(r, key, extra) {
      const res = await unary(grpcClientOf(r), 'GetBlockNumber', {}, keyMetadata(key, extra));
      return grpcOutcome(res.error);
    },
  },
  {
    name: 'disk-sync',
    port: () => disksync.port,
    async probe(r, key, extra) {
      const c = connectSync(`ws://127.0.0.1:${r.port}`, { ...(key ? { key } : {}), headers: extra ?? {} });
      c.send({ op: 'subscribe', id: 'probe' });
      const got = await Promise.race([
        c.control('subscribed').then(() => 'admitted' as const),
        refusal(c).then((x) =>
          x.code === 4001 ? 'invalid_key' : x.code === 4029 ? 'rate_limited' : `${x.code}`,
        ),
      ]);
      await c.close();
      return got;
    },
  },
];

/** One grpc-js client (one HTTP/2 connection) per relay, so a run of calls is not a run of handshakes. */
const grpcClients = new Map<ProxyRelay, PriceClient>();
function grpcClientOf(r: ProxyRelay): PriceClient {
  let client = grpcClients.get(r);
  if (!client) {
    client = priceClient(`127.0.0.1:${r.port}`);
    grpcClients.set(r, client);
  }
  return client;
}

function grpcOutcome(err: ServiceError | undefined): Outcome {
  if (!err) return 'admitted';
  if (err.code === 16) return 'invalid_key';
  if (err.code === 8) return 'rate_limited';
  return `grpc ${err.code}`;
}

describe.each(transports)('$name behind the balancer', (t) => {
  it('one client misbehaving spends its own address only; keyless requests and valid keys never count', async () => {
    const bad = await relay(t.port(), { claim: BAD });
    const good = await relay(t.port(), { claim: GOOD });
    const budget = KEY_FAILURES_PER_ADDRESS.burst;

    for (let i = 0; i <= budget; i++)
      expect(await t.probe(bad, null), `keyless #${i + 1}`).toBe('invalid_key');
    for (let i = 0; i < budget; i++)
      expect(await t.probe(bad, generateApiKey()), `bad key #${i + 1}`).toBe('invalid_key');
    expect(await t.probe(bad, generateApiKey())).toBe('rate_limited');
    expect(await t.probe(bad, null), 'no key past the budget: still 401').toBe('invalid_key');
    expect(await t.probe(bad, keys.neighbour), 'a valid key on the spent address').toBe('admitted');

    expect(await t.probe(good, keys.good)).toBe('admitted');
    expect(await t.probe(good, generateApiKey()), "the good address's own budget is whole").toBe(
      'invalid_key',
    );
  }, 60_000);
});

describe('whom the edge believes', () => {
  it('a PROXY header from an untrusted peer reaches the HTTP/1 parser as garbage: 400, no limiter', async () => {
    const spoof = await relay(portOf(http.url), { claim: GOOD, localAddress: UNTRUSTED_PEER });
    const res = await fetch(`${spoof.url}/mcp/manifest`, { headers: keyHeaders(keys.good) });
    expect(res.status).toBe(400);
  });

  it('a PROXY header from an untrusted peer breaks its HTTP/2 connection: the gRPC call fails before any key check', async () => {
    const spoof = await relay(Number(grpc.target.split(':').pop()), {
      claim: GOOD,
      localAddress: UNTRUSTED_PEER,
    });
    const client = priceClient(`127.0.0.1:${spoof.port}`);
    const res = await unary(client, 'GetBlockNumber', {}, keyMetadata(keys.good));
    client.close();
    // The h2 parser refuses the connection before any stream: never a key check (16) nor a limit (8).
    expect(res.value).toBeUndefined();
    expect([13, 14], String(res.error?.details)).toContain(res.error?.code);
  });

  it('X-Forwarded-For counts from a trusted hop only', async () => {
    const port = portOf(jsonRpc.url);
    const untrusted = await relay(port, { localAddress: UNTRUSTED_PEER });
    const trustedHop = await relay(port, {});
    const jsonRpcT = transports[2] as Transport;
    const budget = KEY_FAILURES_PER_ADDRESS.burst;
    const claimed = { 'x-forwarded-for': '198.51.100.9' };
    // From the untrusted peer the header is ignored: its failures are its own address's.
    for (let i = 0; i < budget; i++)
      expect(await jsonRpcT.probe(untrusted, generateApiKey(), claimed)).toBe('invalid_key');
    expect(await jsonRpcT.probe(untrusted, generateApiKey(), claimed)).toBe('rate_limited');
    expect(
      await jsonRpcT.probe(trustedHop, generateApiKey(), claimed),
      '198.51.100.9 was never charged',
    ).toBe('invalid_key');
    // From the trusted hop it names the client: 198.51.100.9 spends its own budget, .10 is whole.
    for (let i = 1; i < budget; i++)
      expect(await jsonRpcT.probe(trustedHop, generateApiKey(), claimed)).toBe('invalid_key');
    expect(await jsonRpcT.probe(trustedHop, generateApiKey(), claimed)).toBe('rate_limited');
    expect(await jsonRpcT.probe(trustedHop, generateApiKey(), { 'x-forwarded-for': '198.51.100.10' })).toBe(
      'invalid_key',
    );
  }, 60_000);
});

describe('console logins behind the balancer', () => {
  const PASSWORD = 'C0rrect-Horse-Battery';
  const email = 'known-user@example.com';

  async function login(
    r: ProxyRelay,
    password: string,
    extra: Record<string, string> = {},
  ): Promise<Outcome> {
    const res = await fetch(`${r.url}/api/v1/console/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...extra },
      body: JSON.stringify({ email, password }),
    });
    await res.body?.cancel();
    return byStatus(res.status);
  }

  it('failed logins lock the (email, address) pair; the email alone only past 100 failures', async () => {
    const port = portOf(http.url);
    const bad = await relay(port, { claim: BAD });
    const good = await relay(port, { claim: GOOD });
    const reg = await fetch(`${good.url}/api/v1/console/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(reg.status).toBe(201);

    for (let i = 0; i <= LOGIN_BACKOFF_PER_PAIR.freeFailures; i++)
      expect(await login(bad, 'wrong-Passw0rd!'), `failure #${i + 1}`).toBe('invalid_key');
    expect(await login(bad, PASSWORD), 'the pair is locked, even for the right password').toBe(
      'rate_limited',
    );
    expect(await login(good, PASSWORD), 'the user, from elsewhere, is not').toBe('admitted');

    // The email alone: 100 failures from 20 addresses (each within its pair's and address's free
    // failures) lock nobody; the 101st locks the email everywhere.
    const perAddress = LOGIN_BACKOFF_PER_PAIR.freeFailures;
    expect(perAddress).toBeLessThanOrEqual(LOGIN_BACKOFF_PER_ADDRESS.freeFailures);
    const hop = await relay(port, {});
    const addresses = LOGIN_BACKOFF_PER_EMAIL.freeFailures / perAddress;
    for (let a = 0; a < addresses; a++)
      for (let i = 0; i < perAddress; i++)
        expect(await login(hop, 'wrong-Passw0rd!', { 'x-forwarded-for': `198.51.100.${a + 1}` })).toBe(
          'invalid_key',
        );
    expect(await login(hop, 'wrong-Passw0rd!', { 'x-forwarded-for': '198.51.100.200' })).toBe('invalid_key');
    expect(await login(good, PASSWORD), 'past 100 failures the email itself is locked').toBe('rate_limited');
  }, 120_000);
});
