/**
 * The real service process (all roles, development mode) against its own nats-server: it writes a
 * demo API key; a real EventSource client using it receives simulated trades and books with
 * `id:` = stream sequence; SIGTERM sends every client a terminal `reconnect`, then a clean exit.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { startService } from '../support/process.ts';

let nats: TestNats;
const dataDir = mkdtempSync(join(tmpdir(), 'mdp-e2e-'));

beforeAll(async () => {
  nats = await startTestNats();
});

afterAll(async () => {
  await nats?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

it('streams simulated markets to EventSource with the demo key and says reconnect on SIGTERM', async () => {
  const svc = startService([], {
    NODE_ENV: 'development',
    DATA_DIR: dataDir,
    NATS_URL: nats.url,
    HTTP_PORT: '0',
    UNIFIED_PORT_US: '0',
    UNIFIED_PORT_JP: '0',
    JSONRPC_PORT_US: '0',
    JSONRPC_PORT_JP: '0',
    // Every edge of `all` on a free port: two services, or another test's, may run at once.
    GRPC_PORT_US: '0',
    GRPC_PORT_JP: '0',
    DISKSYNC_PORT_US: '0',
    DISKSYNC_PORT_JP: '0',
    SIM_TRADE_RATE: '50',
  });
  const listening = await svc.waitForLog((l) => l.msg === 'unified stream listening' && l.region === 'us');
  await svc.waitForLog((l) => l.msg === 'running');
  const key = readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim();
  // Printed once for the developer (the banner), never in a structured log line.
  expect(svc.logs.some((l) => l.msg?.includes(key))).toBe(true);
  expect(svc.logs.some((l) => 'level' in l && JSON.stringify(l).includes(key))).toBe(false);

  const withKey: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), 'x-api-key': key } });
  const es = new EventSource(`${listening.url}?coin=BTC,ETH`, { fetch: withKey });
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
  for (let i = 1; i < ids.length; i++)
    expect(ids[i] as number, `id ${i} after ${ids[i - 1]}`).toBeGreaterThan(ids[i - 1] as number);
  expect(errors[0]).toMatchObject({ code: 'reconnect', terminal: true });
  expect(code).toBe(0);
});
