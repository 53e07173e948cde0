/**
 * The real service process (all roles) against its own nats-server: a real EventSource client
 * receives simulated trades and books with `id:` = stream sequence, and SIGTERM sends every
 * client a terminal `reconnect` before the process exits cleanly.
 */
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { startService } from '../support/process.ts';

let nats: TestNats;

beforeAll(async () => {
  nats = await startTestNats();
});

afterAll(async () => {
  await nats?.cleanup();
});

it('streams simulated markets to EventSource and says reconnect on SIGTERM', async () => {
  const svc = startService([], {
    NATS_URL: nats.url,
    UNIFIED_PORT_US: '0',
    UNIFIED_PORT_JP: '0',
    SIM_TRADE_RATE: '50',
  });
  const listening = await svc.waitForLog((l) => l.msg === 'unified stream listening' && l.region === 'us');
  await svc.waitForLog((l) => l.msg === 'running');

  const es = new EventSource(`${listening.url}?coin=BTC,ETH`);
  const events: { id: string; data: Record<string, unknown> }[] = [];
  const errors: Record<string, unknown>[] = [];
  const gotEvents = new Promise<void>((resolve) => {
    es.onmessage = (m) => {
      events.push({ id: m.lastEventId, data: JSON.parse(m.data) });
      if (events.length === 50) resolve();
    };
  });
  const gotTerminal = new Promise<void>((resolve) => {
    es.addEventListener('error', (e) => {
      const data = (e as unknown as { data?: string }).data;
      if (!data) return;
      errors.push(JSON.parse(data));
      es.close();
      resolve();
    });
  });
  await gotEvents;
  svc.child.kill('SIGTERM');
  await gotTerminal;
  const code = await svc.exited;

  expect(new Set(events.map((e) => e.data.symbol))).toEqual(new Set(['BTC', 'ETH']));
  expect(new Set(events.map((e) => e.data.event_type))).toEqual(new Set(['trade', 'book']));
  for (const e of events) expect(Number(e.id)).toBe(e.data.seq);
  const ids = events.map((e) => Number(e.id));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(errors[0]).toMatchObject({ code: 'reconnect', terminal: true });
  expect(code).toBe(0);
});
