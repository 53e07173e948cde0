/**
 * Compare-and-swap writes over deleted keys (platform/kv-cas.ts `remove`), on a real nats-server:
 * a delete carries the `<key>@<revision>` id too, a create over its marker is a conflict, and the
 * key is written again at the marker's revision, well within the duplicate window (a second `@0`
 * would be refused as a duplicate). The disk-sync leases and JSON-RPC filter slots rely on this.
 */
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import { CasConflictError, casWriter } from '../../platform/kv-cas.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

let server: TestNats;
let nats: Nats;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectNats(server.url, 'test', createLogger('error', 'test'));
});
afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
});

describe('casWriter over deleted keys', () => {
  it('removes at a revision once, and writes the key again over its marker', async () => {
    const kv = await new Kvm(nats.js).create('cas_delete_test', { history: 1 });
    const cas = casWriter(nats.js, 'cas_delete_test', 2_000);
    const first = await cas.create('k', 'a');
    await expect(cas.create('k', 'b')).rejects.toBeInstanceOf(CasConflictError);
    const marker = await cas.remove('k', first);
    await expect(cas.remove('k', first)).rejects.toBeInstanceOf(CasConflictError);
    const entry = await kv.get('k');
    expect(entry?.operation).toBe('DEL');
    expect(entry?.revision).toBe(marker);
    await expect(cas.create('k', 'c')).rejects.toBeInstanceOf(CasConflictError);
    const again = await cas.update('k', 'c', marker);
    await expect(cas.update('k', 'd', marker)).rejects.toBeInstanceOf(CasConflictError);
    expect((await kv.get('k'))?.string()).toBe('c');
    expect(again).toBeGreaterThan(marker);
  });

  it('a released disk-sync lease is taken again at once, by one of two racing acquirers', async () => {
    const leases = await KeyLeases.open(nats, 10_000);
    const first = await leases.acquire('key-1');
    expect(first).not.toBeNull();
    expect(await leases.acquire('key-1')).toBeNull();
    first?.release();
    await expect
      .poll(async () =>
        (await new Kvm(nats.js).open(KV_BUCKETS.disksyncLeases)).get('key-1').then((e) => e?.operation),
      )
      .toBe('DEL');
    const raced = await Promise.all([leases.acquire('key-1'), leases.acquire('key-1')]);
    expect(raced.filter((l) => l !== null)).toHaveLength(1);
    expect(await raced.find((l) => l !== null)?.renew()).toBe('renewed');
  });

  it('a filter slot freed by an uninstall is installed again, by one of two racing installs', async () => {
    const store = await FilterStore.open(nats, 60_000);
    const filter = { coins: null, event_types: null, sources: null, viewer: null, cursor: 0 };
    const id = await store.install('kx', 1, filter);
    await expect(store.install('kx', 1, filter)).rejects.toMatchObject({ code: 'subscription_limit' });
    expect(await store.uninstall('kx', id)).toBe(true);
    expect(await store.uninstall('kx', id)).toBe(false);
    const raced = await Promise.allSettled([store.install('kx', 1, filter), store.install('kx', 1, filter)]);
    const won = raced.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const wonId = (won[0] as PromiseFulfilledResult<string>).value;
    expect(await store.poll('kx', wonId, async () => ({ events: [], reached: 0 }))).toEqual([]);
  });
});
