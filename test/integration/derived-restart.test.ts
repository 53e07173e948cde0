/**
 * The derived producer as a real process (`producer derived`) under a real simulator process:
 * killed with SIGKILL twice while the simulator publishes, started again each time; at the end
 * `DERIVED` holds every closed bar and snapshot exactly once (by subject and start), equal to the
 * batch computation from what `MD` stored, and no process ever had a publish dropped as a duplicate
 * (the resume floors alone kept it from publishing again, not only the stream's duplicate window).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { DERIVED_ALL, MD_ALL } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import { derivedKey, readAll, referenceDerived } from '../support/derived-reference.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { type ServiceProcess, startService, stopProcess } from '../support/process.ts';
import { seededRandom } from '../support/seeded-random.ts';

let server: TestNats | null = null;
let nats: Nats | null = null;
const processes: ServiceProcess[] = [];

afterAll(async () => {
  for (const p of processes) await stopProcess(p, 'SIGKILL');
  await nats?.nc.close();
  await server?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('killed -9 mid-way and started again, every bar is in DERIVED once and equal to the bars MD gives', async () => {
  const { random } = seededRandom('derived kill points');
  server = await startTestNats();
  nats = await connectTestNats(server.url, testConfig());
  const env = {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: `test-${randomBytes(16).toString('hex')}`,
    SIM_TRADE_RATE: '50',
  };
  const sim = startService(['producer', 'sim'], env);
  processes.push(sim);
  await sim.waitForLog((l) => l.msg === 'running', 60_000);

  const derivedCount = async () => (await (nats as Nats).jsm.streams.info(STREAMS.DERIVED)).state.messages;
  const startDerived = async () => {
    const p = startService(['producer', 'derived'], env);
    processes.push(p);
    await p.waitForLog((l) => l.msg === 'derived producer reading MD', 60_000);
    return p;
  };
  let derived = await startDerived();
  for (let kill = 0; kill < 2; kill++) {
    const before = await derivedCount();
    await eventually(async () => (await derivedCount()) > before + 8, 90_000, 'bars published');
    await sleep(Math.floor(random() * 1_500));
    await stopProcess(derived, 'SIGKILL');
    await sleep(500 + Math.floor(random() * 1_500)); // the simulator goes on meanwhile
    derived = await startDerived();
  }
  await sleep(2_000);
  await stopProcess(sim, 'SIGTERM');

  const reference = referenceDerived(await readAll(nats, STREAMS.MD, MD_ALL));
  expect(reference.size).toBeGreaterThan(50);
  const stored = await eventually(
    async () => {
      const all = await readAll(nats as Nats, STREAMS.DERIVED, DERIVED_ALL);
      return all.length >= reference.size && all;
    },
    90_000,
    'DERIVED caught up',
  );
  const keys = stored.map((m) => derivedKey(m.subject, m.text));
  expect(new Set(keys).size).toBe(keys.length); // each (subject, start) once
  expect([...keys].sort()).toEqual([...reference.keys()].sort());
  for (const m of stored) expect(m.text, m.subject).toBe(reference.get(derivedKey(m.subject, m.text)));
  // No process had a publish dropped as already stored: the floors, not the duplicate window, held.
  for (const p of processes)
    expect(p.logs.filter((l) => String(l.msg).includes('published again'))).toEqual([]);
  await stopProcess(derived, 'SIGTERM');
}, 300_000);
