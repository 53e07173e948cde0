/**
 * Exact sync through a real `gateway disksync` process: a client cut at random points (its socket
 * dropped) and resumed with `from_seq` ends with every published sequence once, in order, in both
 * encodings; a subscription from before retention is answered with `position_not_retained` and
 * the position used; SIGTERM closes clients with 1001; NATS gone past the grace period → 4009.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import {
  connectSync,
  refusal,
  type SyncClient,
  type SyncedEvent,
  startDisksyncEdge,
  stopAll,
} from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import type { ServiceProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const processes: ServiceProcess[] = [];
const clients: SyncClient[] = [];

const startEdge = () =>
  startDisksyncEdge(
    server.url,
    config.API_KEY_SECRET,
    'us',
    { DISKSYNC_PING_INTERVAL_MS: '200', DISKSYNC_NATS_GRACE_MS: '1000', DISKSYNC_LEASE_TTL_MS: '3000' },
    processes,
  ).url;

let url: string;
let second: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  [url, second] = await Promise.all([startEdge(), startEdge()]);
}, 180_000);

afterAll(async () => {
  await stopAll(clients, processes, 'SIGKILL');
  await base?.close();
});

/** One connection from `after` until it has `cut` more events or reaches `until`; its events. */
async function syncOnce(
  key: string,
  encoding: 'json' | 'msgpack',
  after: number,
  cut: number,
  until: () => number,
): Promise<SyncedEvent[]> {
  const c = connectSync(url, { key });
  clients.push(c);
  c.send({ op: 'subscribe', id: 'disk', from_seq: after, encoding });
  const done = await Promise.race([
    eventually(
      () => c.events.length >= cut || (c.events.at(-1)?.seq ?? after) >= until(),
      60_000,
      'events',
      5,
    ).then(() => true),
    c.closed.then(() => false), // 4008 while the previous connection's lease is released: retry
  ]);
  c.ws.terminate();
  return done ? c.events.slice() : [];
}

describe.each(['json', 'msgpack'] as const)('exact sync (%s)', (encoding) => {
  it('a client cut at random points and resumed with from_seq keeps every sequence once, in order', async () => {
    const { random } = seededRandom(`disk-sync ${encoding} cuts`);
    const { key } = await accounts.key('quant');
    const start = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH', 'SOL'], 400, { booksEvery: 3 });
    let last = Number.POSITIVE_INFINITY;
    const file: number[] = [];
    let cuts = 0;
    const stopping = (async () => {
      while (publisher.published() < 1_200) await new Promise((r) => setTimeout(r, 20));
      await publisher.stop();
      last = await lastSeq(nats);
    })();
    while ((file.at(-1) ?? start) < last) {
      const after = file.at(-1) ?? start;
      const got = await syncOnce(key, encoding, after, 1 + Math.floor(random() * 300), () => last);
      if (got.length > 0) cuts++;
      for (const e of got) file.push(e.seq);
    }
    await stopping;
    const expected = Array.from({ length: last - start }, (_, i) => start + 1 + i);
    expect(file).toEqual(expected);
    expect(cuts).toBeGreaterThan(1);
  }, 120_000);
});

describe('a subscription from before retention', () => {
  it('is told position_not_retained with the position used, then gets every retained event', async () => {
    const publisher = publishAtRate(nats.js, ['BTC'], 500);
    while (publisher.published() < 100) await new Promise((r) => setTimeout(r, 20));
    await publisher.stop();
    await nats.jsm.streams.purge('MD', { keep: 40 });
    const { first_seq, last_seq } = (await nats.jsm.streams.info('MD')).state;
    const { key } = await accounts.key('quant');
    const c = connectSync(url, { key });
    clients.push(c);
    c.send({ op: 'subscribe', id: 'old', from_seq: 1 });
    const notice = await c.control('notice');
    expect(notice).toMatchObject({ code: 'position_not_retained', resumed_after: first_seq - 1 });
    await c.control('caught_up');
    expect(c.events.map((e) => e.seq)).toEqual(
      Array.from({ length: last_seq - first_seq + 1 }, (_, i) => first_seq + i),
    );
    await c.close();
  });
});

describe('ends', () => {
  it('1001: the gateway shutting down (SIGTERM)', async () => {
    const { key } = await accounts.key('quant');
    const c = connectSync(second, { key });
    clients.push(c);
    c.send({ op: 'subscribe', id: 'x' });
    await c.control('caught_up');
    processes[1]?.child.kill('SIGTERM');
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 1001, error: { code: 'reconnect', close_code: 1001 } });
    expect(Buffer.byteLength(r.reason)).toBeLessThanOrEqual(123);
  });

  it('4009: NATS unreachable past the grace period', async () => {
    const { key } = await accounts.key('quant');
    const c = connectSync(url, { key });
    clients.push(c);
    c.send({ op: 'subscribe', id: 'x' });
    await c.control('caught_up');
    await server.kill('SIGKILL');
    const r = await refusal(c);
    expect(r).toMatchObject({ code: 4009, error: { close_code: 4009 } });
  });
});
