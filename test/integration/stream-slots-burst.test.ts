/**
 * A key opening many streams at once (gateways/core/stream-slots.ts): every open is a
 * compare-and-set on the key's one KV record, so N simultaneous opens are N writers racing; each
 * round one wins. Under the cap all are admitted (none refused for "too many concurrent writers",
 * which the edges answer 503); past it exactly `cap` are admitted, over two slot stores as two
 * gateway processes would hold them.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openKvStreamSlots, type StreamSlots } from '../../gateways/core/stream-slots.ts';
import type { Nats } from '../../platform/nats.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

let server: TestNats;
let nats: Nats;
let stores: StreamSlots[] = [];

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
  stores = [
    await openKvStreamSlots(nats, { ttlMs: 15_000 }),
    await openKvStreamSlots(nats, { ttlMs: 15_000 }),
  ];
});

afterAll(async () => {
  for (const s of stores) await s.close();
  await nats?.nc.close();
  await server?.cleanup();
});

const burst = (key: string, n: number, cap: number) =>
  Promise.allSettled(Array.from({ length: n }, (_, i) => (stores[i % 2] as StreamSlots).acquire(key, cap)));

it('100 simultaneous opens under a cap of 100 are all admitted', { timeout: 60_000 }, async () => {
  const results = await burst('burst-under', 100, 100);
  expect(
    results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason)),
  ).toEqual([]);
  const admitted = results.filter((r) => r.status === 'fulfilled' && r.value.admitted).length;
  expect(admitted).toBe(100);
  expect(
    (stores[0] as StreamSlots).held('burst-under') + (stores[1] as StreamSlots).held('burst-under'),
  ).toBe(100);
});

it('130 simultaneous opens over a cap of 100: exactly 100 admitted, the rest refused at the cap', {
  timeout: 60_000,
}, async () => {
  const results = await burst('burst-over', 130, 100);
  expect(results.filter((r) => r.status === 'rejected').length).toBe(0);
  const values = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  expect(values.filter((v) => v.admitted).length).toBe(100);
  for (const v of values.filter((v) => !v.admitted)) expect(v.open).toBe(100);
});
