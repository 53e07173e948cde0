/**
 * `npm start` exactly as a user runs it (embedded nats-server, development mode), stopped with
 * Ctrl-C: SIGINT to the whole process group (npm, sh, node). The embedded server has a
 * group of its own, so it outlives the app's shutdown: the client is told `reconnect`, the
 * dashboard's service key is revoked (its revocation is in the ACCOUNTS log afterwards), nothing
 * waits on a timeout, the app logs `stopped` (just before exit 0), and the nats-server is gone.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { EventSource } from 'eventsource';
import { afterAll, expect, it } from 'vitest';
import type { AccountEvent } from '../../contracts/accounts.ts';
import { STREAMS } from '../../contracts/streams.ts';

/** What the README and docs/operations.md promise for Ctrl-C (measured 1.6–2.6 s): SHUTDOWN_DEADLINE_MS's default. */
const SHUTDOWN_BOUND_MS = 5_000;

import { decode } from '../../platform/msgpack.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import type { LogLine } from '../support/process.ts';
import { storedMessages } from '../support/stored-seqs.ts';
import { within } from '../support/within.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'mdp-ctrl-c-'));
let child: ChildProcess | null = null;
let reopened: TestNats | null = null;

afterAll(async () => {
  if (child?.pid) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  }
  // The embedded nats-server has a group of its own: after a failed run it may still be up.
  try {
    execFileSync('pkill', ['-KILL', '-f', `nats-server .*${join(dataDir, 'nats')}`]);
  } catch {}
  await reopened?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// A fresh clone's first `npm start` compiles every module through tsx (no cache yet) while other
// test files run: starting may take most of a minute on two cores, so the test's own bound is
// the sum of its steps' (start 60 s, then 20 s each), each of which names itself when it fails.
it('stops on Ctrl-C with every client told reconnect, the service key revoked and NATS stopped last', {
  timeout: 150_000,
}, async () => {
  child = spawn('npm', ['start', '--silent'], {
    detached: true, // its own group, like a terminal's foreground job
    env: {
      ...process.env,
      NODE_ENV: '',
      NATS_URL: '',
      DATA_DIR: dataDir,
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
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  // npm itself dies of the SIGINT; its children finish their own shutdown and write to the same
  // pipe, which closes only when the last of them has exited.
  const outputClosed = new Promise<void>((resolve) => child?.stdout?.once('close', () => resolve()));
  const running = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`service did not start: ${stderr.slice(-2_000)}`)),
      60_000,
    );
    createInterface({ input: child?.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ msg: line });
      }
      if (logs.at(-1)?.msg === 'running') {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await running;
  const natsUrl = logs.find((l) => String(l.msg).startsWith('embedded nats-server started'))?.url as string;
  const [natsPid] = execFileSync('pgrep', ['-f', `nats-server .*${join(dataDir, 'nats')}`])
    .toString()
    .trim()
    .split('\n')
    .map(Number);
  expect(natsUrl).toMatch(/^nats:\/\/127\.0\.0\.1:\d+$/);
  expect(alive(natsPid as number)).toBe(true);
  const unified = logs.find((l) => l.msg === 'unified stream listening' && l.region === 'us')?.url as string;
  const key = readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim();

  const es = new EventSource(`${unified}?coin=BTC`, {
    fetch: (input, init) => fetch(input, { ...init, headers: { 'x-api-key': key } }),
  });
  let received = 0;
  /** Connection failures before the first event (EventSource retries them): named if it never comes. */
  const failures: string[] = [];
  const firstEvent = new Promise<void>((resolve) => {
    es.onmessage = () => {
      received++;
      resolve();
    };
  });
  const terminal = new Promise<Record<string, unknown>>((resolve) => {
    es.addEventListener('error', (e) => {
      const { data, code, message } = e as unknown as { data?: string; code?: number; message?: string };
      if (!data) {
        if (received === 0) failures.push(`${code ?? ''} ${message ?? ''}`.trim());
        return;
      }
      es.close();
      resolve(JSON.parse(data));
    });
  });
  await within(firstEvent, 20_000, 'the first event').catch((err) => {
    throw new Error(`${err.message}; connection failures: ${JSON.stringify(failures)}`);
  });

  process.kill(-(child.pid as number), 'SIGINT');
  // A failure says what the service logged after the signal (a shutdown past its deadline names its part).
  const afterSignal = logs.length;
  const told = await within(terminal, 20_000, "the stream's terminal notice after Ctrl-C").catch((err) => {
    const said = logs.slice(afterSignal).map((l) => `${l.msg}${l.part ? ` (${l.part})` : ''}`);
    throw new Error(`${err.message}; the service logged: ${JSON.stringify(said)}`);
  });
  expect(told).toMatchObject({
    code: 'reconnect',
    terminal: true,
  });
  await within(outputClosed, 20_000, 'every process of the group gone after Ctrl-C');
  expect(received).toBeGreaterThan(0);

  const names = logs.map((l) => l.msg);
  expect(names).toContain('stopped');
  for (const bad of ['stop failed', 'service key not revoked', 'shutdown deadline passed', 'process fault'])
    expect(names, `log says "${bad}"`).not.toContain(bad);
  const stopped = logs.find((l) => l.msg === 'stopped') as LogLine;
  process.stdout.write(`${JSON.stringify({ shutdown_ms: stopped.duration_ms })}\n`);
  // The whole stop (clients told, service key revoked, every part closed) within the bound the
  // README and docs/operations.md state: SHUTDOWN_DEADLINE_MS's default, past which the process exits 1 instead of 0.
  expect(stopped.duration_ms as number).toBeLessThanOrEqual(SHUTDOWN_BOUND_MS);
  expect(alive(natsPid as number)).toBe(false);

  // The store the embedded server left: every dashboard-proxy key created was revoked.
  reopened = await startTestNats(join(dataDir, 'nats'));
  const nc = await connect({ servers: reopened.url });
  const jsm = await jetstreamManager(nc);
  const created = new Set<string>();
  const revoked = new Set<string>();
  for (const msg of await storedMessages({ jsm }, STREAMS.ACCOUNTS)) {
    const ev = decode<AccountEvent>(msg.data);
    if (ev.type === 'key_created' && ev.name.startsWith('dashboard proxy')) created.add(ev.key_id);
    if (ev.type === 'key_revoked') revoked.add(ev.key_id);
  }
  await nc.close();
  expect(created.size).toBe(1);
  for (const id of created) expect(revoked.has(id), `service key ${id} revoked`).toBe(true);
});
