/**
 * The filter store reads a key's slots with direct gets, never with a consumer (issue 13: after the
 * filter bucket's leader died, the consumer a key listing makes waited on the new leader and
 * md_newFilter failed -32009 for seconds). On a real nats-server, with a probe subscribed to the
 * JetStream API subjects: install, refusal at the cap, uninstall, re-install and poll ask for no
 * consumer and read through `$JS.API.DIRECT.GET`; a bucket made without `allow_direct` is given it;
 * the cap stays exact when installs race over two connections; and a write that no server takes
 * ("no responders", as while a stream elects its leader) is sent again until a stream takes it,
 * within its bound (a bucket that does not exist yet stands in for a stream without a leader).
 */
import { Kvm } from '@nats-io/kv';
import type { Subscription } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import { isNoLeader, retryingWithoutLeader } from '../../gateways/jsonrpc/no-leader-retry.ts';
import { CasConflictError, casWriter } from '../../platform/kv-cas.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const TTL_MS = 60_000;
const STREAM = `KV_${KV_BUCKETS.jsonrpcFilters}`;
const filter = { coins: null, event_types: null, sources: null, viewer: null, cursor: 0 };
let server: TestNats;
let nats: Nats;
let other: Nats;

const connect = () => connectNats(server.url, 'test', createLogger('error', 'test'));

beforeAll(async () => {
  server = await startTestNats();
  [nats, other] = await Promise.all([connect(), connect()]);
});
afterAll(async () => {
  await Promise.all([nats?.nc.close(), other?.nc.close()]);
  await server?.cleanup();
});

/** Counts the requests published on `subject` (a plain subscriber sees them beside the server). */
async function probe(subject: string) {
  const seen: string[] = [];
  const sub: Subscription = nats.nc.subscribe(subject, { callback: (_e, m) => void seen.push(m.subject) });
  await nats.nc.flush();
  return {
    seen,
    async stop() {
      await nats.nc.flush();
      sub.unsubscribe();
    },
  };
}

describe('the filter bucket', () => {
  it('is given allow_direct when it was made without it', async () => {
    await new Kvm(nats.js).create(KV_BUCKETS.jsonrpcFilters, {
      history: 1,
      ttl: TTL_MS,
      allow_direct: false,
    });
    expect((await nats.jsm.streams.info(STREAM)).config.allow_direct).toBe(false);
    await FilterStore.open(nats, TTL_MS);
    expect((await nats.jsm.streams.info(STREAM)).config.allow_direct).toBe(true);
  });
});

describe('an install', () => {
  it('reads the key’s slots with direct gets and asks for no consumer, up to the cap and after', async () => {
    const store = await FilterStore.open(nats, TTL_MS);
    const consumers = await probe('$JS.API.CONSUMER.>');
    const direct = await probe(`$JS.API.DIRECT.GET.${STREAM}.>`);
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await store.install('k1', 4, filter));
    await expect(store.install('k1', 4, filter)).rejects.toMatchObject({ code: 'subscription_limit' });
    expect(await store.uninstall('k1', ids[2] as string)).toBe(true);
    const again = await store.install('k1', 4, filter);
    expect(await store.poll('k1', again, async () => ({ events: [], reached: 7 }))).toEqual([]);
    await Promise.all([consumers.stop(), direct.stop()]);
    expect(consumers.seen).toEqual([]);
    // 6 installs read 4 slots each; the uninstall and the poll read theirs.
    expect(direct.seen.length).toBeGreaterThanOrEqual(6 * 4);
  });

  it('the probe sees the consumer a key listing would make', async () => {
    const consumers = await probe('$JS.API.CONSUMER.>');
    const kv = await new Kvm(nats.js).open(KV_BUCKETS.jsonrpcFilters);
    for await (const _ of await kv.keys('k1.*'));
    await consumers.stop();
    expect(consumers.seen.length).toBeGreaterThan(0);
  });

  it('keeps the cap exact when 12 installs race over two connections', async () => {
    const [a, b] = await Promise.all([FilterStore.open(nats, TTL_MS), FilterStore.open(other, TTL_MS)]);
    const raced = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).install('k2', 5, filter)),
    );
    const won = raced.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const refused = raced.flatMap((r) => (r.status === 'rejected' ? [r.reason.code] : []));
    expect(new Set(won).size).toBe(5);
    expect(refused).toEqual(Array(7).fill('subscription_limit'));
    const slots = new Set(won.map((id) => Number.parseInt(id.slice(2, 6), 16)));
    expect([...slots].sort()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('a write while no stream takes it', () => {
  it('fails at once with "no responders" without the retry', async () => {
    const err = await casWriter(nats.js, 'not_yet_a', 1_000)
      .create('k', 'v')
      .catch((e: unknown) => e);
    expect(isNoLeader(err)).toBe(true);
    expect(isNoLeader(new CasConflictError('k', 0))).toBe(false);
  });

  it('is sent again until the stream exists, once, and gives up after its bound', async () => {
    const cas = retryingWithoutLeader(casWriter(nats.js, 'not_yet_b', 1_000), 5_000);
    const startMs = Date.now();
    const write = cas.create('k', 'v');
    await new Promise((r) => setTimeout(r, 700));
    const kv = await new Kvm(nats.js).create('not_yet_b', { history: 5 });
    const revision = await write;
    expect(Date.now() - startMs).toBeGreaterThanOrEqual(700);
    expect((await kv.get('k'))?.revision).toBe(revision);
    expect((await kv.status()).values).toBe(1);
    const bounded = retryingWithoutLeader(casWriter(nats.js, 'not_yet_c', 1_000), 500);
    const err = await bounded.create('k', 'v').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'upstream_timeout' });
    expect(isNoLeader(err)).toBe(true);
  });
});
