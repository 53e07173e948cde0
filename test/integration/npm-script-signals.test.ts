/**
 * The npm scripts that run a long-lived process (`npm start`, `npm run cluster`, the operator,
 * the benchmarks) deliver Ctrl-C and SIGTERM to that process's own handler even when it is busy.
 * tsx's command line does not: it relays the signal, and SIGKILLs a child that has not answered
 * within 60 ms, so a loaded `npm start` stopped without telling its clients anything (CI run 67,
 * `service-ctrl-c`). Each script here runs as npm runs it (`sh -c`, its own process group, the
 * signal to the whole group as a terminal sends it), its entry swapped for a fixture that blocks
 * its event loop 200 ms out of every 210.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { within } from '../support/within.ts';

const ROOT = join(import.meta.dirname, '../..');
const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<
  string,
  string
>;
const FIXTURE = 'test/fixtures/processes/busy-on-signal.ts';
const LONG_LIVED = ['start', 'cluster', 'operator', 'bench', 'soak'] as const;

async function signalled(script: string, signal: 'SIGINT' | 'SIGTERM'): Promise<string> {
  // The script's own command line, its TypeScript entry replaced by the fixture.
  const command = scripts[script]?.replace(/\S+\.ts\b/, FIXTURE);
  expect(command, `npm script ${script}`).toContain(FIXTURE);
  const child = spawn('sh', ['-c', command as string], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  // sh dies of the signal itself, as npm does; the output closes once the last process has gone.
  const closed = new Promise<void>((resolve) => child.stdout.once('close', () => resolve()));
  await within(
    new Promise<void>((resolve) => child.stdout.on('data', () => out.includes('ready') && resolve())),
    30_000,
    `${script} ready`,
  );
  // Twice as a busy loop begins: the signal lands while the process cannot answer for 200 ms.
  await new Promise((r) => setTimeout(r, 300));
  process.kill(-(child.pid as number), signal);
  await within(closed, 10_000, `${script} gone after ${signal}`).finally(() => {
    try {
      process.kill(-(child.pid as number), 'SIGKILL');
    } catch {}
  });
  return out;
}

for (const script of LONG_LIVED)
  it(`npm run ${script}: a busy process runs its own Ctrl-C and SIGTERM handlers`, {
    timeout: 60_000,
  }, async () => {
    expect(await signalled(script, 'SIGINT')).toContain('handled SIGINT');
    expect(await signalled(script, 'SIGTERM')).toContain('handled SIGTERM');
  });
