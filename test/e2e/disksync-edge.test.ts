/**
 * The disk-sync WebSocket edge as deployed: real `gateway disksync` processes (two US, one JP) on
 * one private nats-server, events published from this process, the real `ws` client.
 * - every close code reached by the client behaviour that causes it, each with its `error`
 *   message and a UTF-8 reason within 123 bytes; refusals at admission complete the upgrade first;
 * - one connection per key across processes (4008), and a lease freed after its holder is killed
 *   with `kill -9` within DISKSYNC_LEASE_TTL_MS;
 * - revocation closes connections on both processes with 4002;
 * - the `api_key` query parameter appears in no log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { connectSync, refusal, type SyncClient, startDisksyncEdge, stopAll } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import type { ServiceProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const LEASE_TTL_MS = 2_000;
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const clients: SyncClient[] = [];
let usA: string;
let usB: string;
let jp: string;

const ENV = {
  // Debug: the upgrade's URL is logged (redacted), the positive control of the api_key test.
  LOG_LEVEL: 'debug',
  DISKSYNC_PING_INTERVAL_MS: '200',
  DISKSYNC_PONG_TIMEOUT_MS: '1000',
  DISKSYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
  DISKSYNC_MAX_SUBSCRIPTIONS: '2',
  DISKSYNC_MSG_RATE: '10',
};

const startEdge = (region: 'us' | 'jp') =>
  startDisksyncEdge(server.url, config.API_KEY_SECRET, region, ENV, processes);

function open(url: string, opts: Parameters<typeof connectSync>[1]): SyncClient {
  const c = connectSync(url, opts);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  [usA, usB, jp] = await Promise.all([startEdge('us').url, startEdge('us').url, startEdge('jp').url]);
}, 180_000);

afterAll(async () => {
  await stopAll(clients, processes, 'SIGTERM');
  await base?.close();
});

/** Resolves once a connection of `key` to `url` is admitted (refused ones are retried); when. */
async function admittedWhenFree(url: string, key: string, ms: number): Promise<number> {
  let at = 0;
  await eventually(
    async () => {
      const probe = open(url, { key });
      probe.send({ op: 'subscribe', id: 'a' });
      const ok = await Promise.race([
        probe.control('caught_up', () => true, 5_000).then(() => true),
        probe.closed.then(() => false),
      ]);
      if (ok) at = performance.now();
      await probe.close();
      return ok;
    },
    ms,
    'the key free again',
    100,
  );
  return at;
}

function expectReason(reason: string): void {
  expect(reason.length).toBeGreaterThan(0);
  expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
}

describe('a subscription', () => {
  it('says where it starts, is caught up, then delivers live events in batches (json)', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    c.send({ op: 'subscribe', id: 's1', coins: ['BTC'], event_types: ['trade'] });
    const subscribed = await c.control('subscribed');
    expect(subscribed).toMatchObject({ id: 's1', encoding: 'json' });
    await c.control('caught_up', (x) => x.id === 's1');
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200);
    await eventually(() => c.events.length >= 20, 20_000, '20 BTC trades');
    await publisher.stop();
    for (const e of c.events) expect(e).toMatchObject({ symbol: 'BTC', event_type: 'trade' });
    expect(c.events[0]?.seq).toBeGreaterThan(subscribed.after_seq as number);
    c.send({ op: 'ping' });
    await c.control('pong');
    await c.close();
  });
});

describe('close codes', () => {
  it('4001: a missing or unknown key, after the upgrade, with an error message', async () => {
    const none = await refusal(open(usA, {}));
    expect(none).toMatchObject({ code: 4001, error: { code: 'invalid_key', close_code: 4001 } });
    expectReason(none.reason);
    const unknown = await refusal(open(usA, { key: 'mdk_live_unknown' }));
    expect(unknown.code).toBe(4001);
  });

  it('4003: a plan below Quant, and the JP port for a plan without Japan access', async () => {
    const pro = await accounts.key('pro');
    const r = await refusal(open(usA, { key: pro.key }));
    expect(r).toMatchObject({ code: 4003, error: { code: 'tier_restricted' } });
    expectReason(r.reason);
    const quant = await accounts.key('quant');
    expect((await refusal(open(jp, { key: quant.key }))).code).toBe(4003);
    const withJp = await accounts.key('quant', { jp: true });
    const ok = open(jp, { key: withJp.key });
    ok.send({ op: 'subscribe', id: 'a' });
    await ok.control('caught_up');
    await ok.close();
  });

  it('4005: bad JSON, an unknown op, a bad field, a text frame that is not UTF-8', async () => {
    for (const bad of ['{nope', { op: 'dance' }, { op: 'subscribe', id: 'x', from_seq: -1 }]) {
      const { key } = await accounts.key('quant');
      const c = open(usA, { key });
      c.send(bad);
      const r = await refusal(c);
      expect(r).toMatchObject({ code: 4005, error: { code: 'invalid_params' } });
      expectReason(r.reason);
    }
    // A text frame that is not UTF-8 is malformed too (not ws's bare 1007).
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    c.ws.once('open', () => c.ws.send(bytes, { binary: false }));
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4005, error: { code: 'invalid_params' } });
    expectReason(r.reason);
  });

  it('4004: no coin the platform tracks', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    c.send({ op: 'subscribe', id: 'x', coins: ['NOPE1'] });
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4004, error: { code: 'coin_not_found' } });
  });

  it('4006: one subscription more than the cap, which the reason states', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    for (const id of ['a', 'b', 'c']) c.send({ op: 'subscribe', id, coins: ['BTC'] });
    const r = await refusal(c);
    expect(r.code).toBe(4006);
    expect(r.reason).toContain('2');
  });

  it('4029: client messages faster than the stated rate', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    // Admitted first (a pong comes only then): before it, at most 16 messages are held, a bound
    // of its own (transport-bounds-disksync.test.ts).
    c.send({ op: 'ping' });
    await c.control('pong');
    for (let i = 0; i < 100; i++) c.send({ op: 'ping' });
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4029, error: { code: 'rate_limited' } });
    expect(r.reason).toContain('10 per second');
  });

  it('1009: a client frame over 4 MB', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key });
    c.send('x'.repeat(4 * 1024 * 1024 + 1));
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 1009, error: { code: 'frame_too_big' } });
    expectReason(r.reason);
  });

  it('4007: a client that answers no ping', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usA, { key, autoPong: false });
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4007, error: { code: 'heartbeat_timeout' } });
    expectReason(r.reason);
  });

  it('4008: a second connection of a key through another process', async () => {
    const { key } = await accounts.key('quant');
    const first = open(usA, { key });
    first.send({ op: 'subscribe', id: 'a' });
    await first.control('caught_up');
    const second = await refusal(open(usB, { key }));
    expect(second).toMatchObject({ code: 4008, error: { code: 'duplicate_connection' } });
    expectReason(second.reason);
    // Closing the first frees the key (its lease is deleted, not left to expire).
    await first.close();
    await admittedWhenFree(usB, key, LEASE_TTL_MS / 2);
  });

  it('4002: revocation closes open connections on two processes', async () => {
    const a = await accounts.key('quant');
    const b = await accounts.key('quant');
    const ca = open(usA, { key: a.key });
    const cb = open(usB, { key: b.key });
    for (const c of [ca, cb]) c.send({ op: 'subscribe', id: 'x' });
    await Promise.all([ca.control('caught_up'), cb.control('caught_up')]);
    const t0 = performance.now();
    await Promise.all([
      accounts.service.revokeKey(a.accountId, a.keyId),
      accounts.service.revokeKey(b.accountId, b.keyId),
    ]);
    const [ra, rb] = await Promise.all([refusal(ca), refusal(cb)]);
    const took = performance.now() - t0;
    expect(ra).toMatchObject({ code: 4002, error: { code: 'key_revoked' } });
    expect(rb.code).toBe(4002);
    expect(took).toBeLessThan(1_000);
  });

  it('a lease is freed within DISKSYNC_LEASE_TTL_MS after its holder is killed with kill -9', async () => {
    const victim = startEdge('us');
    const url = await victim.url;
    const { key } = await accounts.key('quant');
    const c = open(url, { key });
    c.send({ op: 'subscribe', id: 'a' });
    await c.control('caught_up');
    victim.process.child.kill('SIGKILL');
    await c.closed;
    const killedAt = performance.now();
    const admittedAt = await admittedWhenFree(usA, key, LEASE_TTL_MS + 10_000);
    // The lease was renewed at most one ping interval before the kill.
    expect(admittedAt - killedAt).toBeLessThanOrEqual(LEASE_TTL_MS + 1_000);
  });

  it('the api_key query parameter appears in no log line', async () => {
    const { key } = await accounts.key('quant');
    const c = open(usB, { query: `?api_key=${key}` });
    c.send({ op: 'subscribe', id: 'x' });
    await c.control('caught_up');
    await c.close();
    const bad = await refusal(open(usB, { query: '?api_key=mdk_live_secretvalue123' }));
    expect(bad.code).toBe(4001);
    for (const p of processes) {
      expect(p.output()).not.toContain(key);
      expect(p.output()).not.toContain('secretvalue123');
    }
    // The upgrades were logged, with the key redacted: the lines the check above looked in exist.
    expect(processes.some((p) => p.output().includes('api_key=[redacted]'))).toBe(true);
  });
});
