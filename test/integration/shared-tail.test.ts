/**
 * One live tail per process: every edge of a process (unified SSE and JSON-RPC, US and JP)
 * acquires the same LiveTail, which holds exactly one JetStream consumer on `MD`; it stops when
 * the last edge releases it (a later edge starts a new one).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireTail } from '../../app/shared-tail.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const config = testConfig();
let server: TestNats;
let nats: Nats;

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
});

afterAll(async () => {
  await nats?.nc.close();
  await server?.cleanup();
});

async function mdConsumers(): Promise<number> {
  return (await nats.jsm.consumers.list(STREAMS.MD).next()).length;
}

/** Polls until `count()` equals `want`, failing with what it waited for after `ms`. */
async function untilConsumers(want: number, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  let got = await mdConsumers();
  while (got !== want) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${want} MD consumers; there are ${got}`);
    await new Promise((r) => setTimeout(r, 50));
    got = await mdConsumers();
  }
}

it('gives every edge of a process the same tail on one MD consumer, stopped with the last release', async () => {
  const holds = await Promise.all([
    acquireTail(nats, config, silentLog()),
    acquireTail(nats, config, silentLog()),
    acquireTail(nats, config, silentLog()),
    acquireTail(nats, config, silentLog()),
  ]);
  expect(new Set(holds.map((h) => h.tail)).size).toBe(1);
  await untilConsumers(1);
  for (const h of holds.slice(1)) h.release();
  const later = await acquireTail(nats, config, silentLog());
  expect(later.tail, 'a held tail was replaced').toBe(holds[0]?.tail);
  later.release();
  holds[0]?.release();
  // Released by every edge: stopped; a later edge starts a new one.
  const again = await acquireTail(nats, config, silentLog());
  expect(again.tail).not.toBe(holds[0]?.tail);
  again.release();
});

function silentLog() {
  return createLogger('silent', 'test');
}
