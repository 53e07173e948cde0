/**
 * The one lease primitive (platform/kv-lease.ts) on a real nats-server: concurrent changes of one
 * record never lose an update (each lost race reads again), an edit that returns null writes
 * nothing, REMOVE deletes and the key is taken again over its marker, and a writer that keeps
 * losing is told so with the record it last saw. Disk-sync connections, stream slots and live
 * synthetic sessions all change their leases through it.
 */
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseBucket, REMOVE } from '../../platform/kv-lease.ts';
import { createLogger } from '../../platform/logger.ts';
import { encode } from '../../platform/msgpack.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

let server: TestNats;
let nats: Nats;
let bucket: LeaseBucket;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectNats(server.url, 'test', createLogger('error', 'test'));
  bucket = await LeaseBucket.open(nats, 'lease_test', { purgeAfterMs: 60_000 });
});
afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
});

type Counter = { n: number; by: string[] };

describe('LeaseBucket', () => {
  it('loses no update among 40 concurrent writers of one record', async () => {
    const writers = Array.from({ length: 40 }, (_, i) =>
      bucket.change<Counter>(
        'counter',
        (cur) => ({ n: (cur?.n ?? 0) + 1, by: [...(cur?.by ?? []), `w${i}`] }),
        { attempts: 200, backoff: { baseMs: 1, maxMs: 20 } },
      ),
    );
    const results = await Promise.all(writers);
    expect(results.every((r) => r.wrote)).toBe(true);
    const final = await bucket.read<Counter>('counter');
    expect(final?.n).toBe(40);
    expect(new Set(final?.by).size).toBe(40);
  });

  it('writes nothing when the edit says so, and reports what it saw', async () => {
    await bucket.change<{ holder: string }>('held', () => ({ holder: 'a' }));
    const r = await bucket.change<{ holder: string }>('held', (cur) => (cur ? null : { holder: 'b' }));
    expect(r).toEqual({ wrote: false, current: { holder: 'a' }, conflict: false });
    expect(await bucket.read('held')).toEqual({ holder: 'a' });
  });

  it('removes a record, and the key is taken again over its delete marker', async () => {
    await bucket.change<{ holder: string }>('gone', () => ({ holder: 'a' }));
    expect(await bucket.change<{ holder: string }>('gone', () => REMOVE)).toEqual({
      wrote: true,
      value: null,
    });
    expect(await bucket.read('gone')).toBeNull();
    const again = await bucket.change<{ holder: string }>('gone', (cur) => (cur ? null : { holder: 'b' }));
    expect(again.wrote).toBe(true);
    expect(await bucket.read('gone')).toEqual({ holder: 'b' });
  });

  it('counts a value that is not JSON (an older encoding) as none, and writes over it', async () => {
    const kv = await new Kvm(nats.js).open('lease_test');
    await kv.put('old', encode({ owner: 'proc_old', until: Date.now() + 60_000 }));
    expect(await bucket.read('old')).toBeNull();
    const r = await bucket.change<{ holder: string }>('old', (cur) => (cur ? null : { holder: 'new' }));
    expect(r.wrote).toBe(true);
    expect(await bucket.read('old')).toEqual({ holder: 'new' });
  });

  it('tells a writer that lost every attempt, with the record it last read', async () => {
    // One attempt each, all from the same first read: exactly one wins, the rest are told.
    await bucket.change<Counter>('race', () => ({ n: 0, by: [] }));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        bucket.change<Counter>('race', (cur) => ({ n: (cur?.n ?? 0) + 1, by: [`w${i}`] }), { attempts: 1 }),
      ),
    );
    const won = results.filter((r) => r.wrote);
    const lost = results.filter((r) => !r.wrote);
    expect(won.length).toBeGreaterThanOrEqual(1);
    expect((await bucket.read<Counter>('race'))?.n).toBe(won.length);
    for (const r of lost) expect(r).toMatchObject({ wrote: false, conflict: true });
  });
});
