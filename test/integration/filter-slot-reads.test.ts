/**
 * What an md_newFilter install reads, on a real nats-server with a probe on the bucket's direct-get
 * subject: a key with a cap of 1,000 and n live filters reads its slots 16 at a time until a free
 * one, so the first install costs 16 gets and the 21st 32 (it cost 1,000 gets each, whatever n);
 * only a key at its cap reads every slot, then -32005.
 */
import type { Subscription } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import { FILTER_SLOT_READ_CHUNK } from '../../contracts/transport-limits.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const STREAM = `KV_${KV_BUCKETS.jsonrpcFilters}`;
const filter = { coins: null, event_types: null, sources: null, viewer: null, cursor: 0 };
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

/** The direct gets `act` makes on the filter bucket. */
async function directGets(act: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const sub: Subscription = nats.nc.subscribe(`$JS.API.DIRECT.GET.${STREAM}.>`, { callback: () => void n++ });
  await nats.nc.flush();
  await act().catch(() => {});
  await nats.nc.flush();
  sub.unsubscribe();
  return n;
}

describe('an install', () => {
  it('reads 16 slots at a time until a free one, not all 1,000', async () => {
    const store = await FilterStore.open(nats, 60_000);
    expect(await directGets(() => store.install('q', 1_000, filter))).toBe(FILTER_SLOT_READ_CHUNK);
    for (let i = 1; i < 20; i++) await store.install('q', 1_000, filter);
    // 20 live: the 21st finds slot 20 in the second chunk.
    expect(await directGets(() => store.install('q', 1_000, filter))).toBe(2 * FILTER_SLOT_READ_CHUNK);
  });

  it('reads every slot only at the cap, then refuses', async () => {
    const store = await FilterStore.open(nats, 60_000);
    for (let i = 0; i < 40; i++) await store.install('full', 40, filter);
    let err: unknown;
    const gets = await directGets(() => store.install('full', 40, filter).catch((e) => (err = e)));
    expect(gets).toBe(40);
    expect(err).toMatchObject({ code: 'subscription_limit' });
  });
});
