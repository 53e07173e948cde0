/**
 * The README's front door cannot drift: every command of its ```bash blocks runs against a real
 * `npm start` (development mode, embedded nats-server), as a user would type it, and must exit 0
 * with an answer that is not an error. What the test changes, and only that: the service listens
 * on free ports (every `127.0.0.1:<default port>` in a command becomes the port it really took;
 * `mdp` gets them as MDP_URL, MDP_STREAM_URL and MDP_DISK_URL), commands run in a fresh directory
 * whose `.data` is the service's DATA_DIR (so `.data/demo-api-key` is its demo key), `curl` is told
 * to print its HTTP status, and streams are cut: `curl -N` after a few seconds (`--max-time`; exit 28
 * is accepted only if events arrived), `mdp stream` by Ctrl-C once events arrived.
 * `npm ci && npm start` is the start itself (`npm ci` already ran: these tests run from an installed
 * tree); `npm test` is this suite and is not run inside it. Any other command the test does not
 * know how to run fails it, so a new README command comes with its check.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogLine } from '../support/process.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const STREAM_SECONDS = 3;

type Kind = 'start' | 'suite' | 'assign' | 'curl' | 'curl-stream' | 'mdp' | 'mdp-stream' | 'unknown';
type Command = { text: string; kind: Kind };

/** The README's bash commands, continuation lines joined, blank and comment-only lines dropped. */
function readmeCommands(readme: string): Command[] {
  const out: Command[] = [];
  for (const block of readme.matchAll(/^```bash\n([\s\S]*?)^```/gm)) {
    const lines = (block[1] as string).replace(/\\\n\s*/g, ' ').split('\n');
    for (const raw of lines) {
      const text = raw.trim();
      if (!text || text.startsWith('#')) continue;
      out.push({ text, kind: kindOf(text) });
    }
  }
  return out;
}

function kindOf(text: string): Kind {
  if (/^npm ci && npm start(\s|$)/.test(text)) return 'start';
  if (/^npm test(\s|$)/.test(text)) return 'suite';
  if (/^(export\s+)?[A-Z_][A-Z0-9_]*=(\$\([^)]*\)|\S+)(\s+#.*)?$/.test(text)) return 'assign';
  if (/^curl\s/.test(text)) return /\s-N\s/.test(text) ? 'curl-stream' : 'curl';
  if (/^npx mdp stream\s/.test(text)) return 'mdp-stream';
  if (/^npx mdp\s/.test(text)) return 'mdp';
  return 'unknown';
}

const commands = readmeCommands(readFileSync(join(root, 'README.md'), 'utf8'));
const runnable = commands.filter((c) => !['start', 'suite', 'assign'].includes(c.kind));

const work = mkdtempSync(join(root, '.data', 'readme-commands-'));
const dataDir = join(work, '.data');
mkdirSync(dataDir);
let service: ChildProcess | null = null;
let outputClosed: Promise<void> = Promise.resolve();
/** `127.0.0.1:<README port>` → `127.0.0.1:<port taken>`. */
const hosts = new Map<string, string>();
const mdpEnv: Record<string, string> = {};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  service = spawn('npm', ['start', '--silent'], {
    cwd: root,
    detached: true,
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
      GRPC_PORT_US: '0',
      GRPC_PORT_JP: '0',
      DISKSYNC_PORT_US: '0',
      DISKSYNC_PORT_JP: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  let stderr = '';
  service.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  outputClosed = new Promise<void>((resolve) => service?.stdout?.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start did not start: ${stderr.slice(-2_000)}`)),
      90_000,
    );
    createInterface({ input: service?.stdout as NodeJS.ReadableStream }).on('line', (line) => {
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
  const url = (msg: string, region?: string) => {
    const line = logs.find((l) => l.msg === msg && (region === undefined || l.region === region));
    if (!line) throw new Error(`no "${msg}" ${region ?? ''} log line`);
    return new URL(String(line.url));
  };
  const listeners: [number, URL][] = [
    [8080, url('http (console) listening')],
    [8081, url('unified stream listening', 'us')],
    [9081, url('unified stream listening', 'jp')],
    [8545, url('json-rpc listening', 'us')],
    [9545, url('json-rpc listening', 'jp')],
    [8082, url('disksync listening', 'us')],
    [9082, url('disksync listening', 'jp')],
  ];
  for (const [readmePort, actual] of listeners) hosts.set(`127.0.0.1:${readmePort}`, actual.host);
  const grpc = (region: string) => logs.find((l) => l.msg === 'grpc listening' && l.region === region)?.port;
  hosts.set('127.0.0.1:50051', `127.0.0.1:${grpc('us')}`);
  hosts.set('127.0.0.1:51051', `127.0.0.1:${grpc('jp')}`);
  Object.assign(mdpEnv, {
    MDP_URL: `http://${hosts.get('127.0.0.1:8080')}`,
    MDP_STREAM_URL: `http://${hosts.get('127.0.0.1:8081')}`,
    MDP_DISK_URL: `ws://${hosts.get('127.0.0.1:8082')}`,
    MDP_CONFIG_DIR: join(work, 'mdp-config'),
  });
  // Warm: the first books are in the latest-state view (a README line asks for BTC's mid price).
  const key = readFileSync(join(dataDir, 'demo-api-key'), 'utf8').trim();
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`http://${hosts.get('127.0.0.1:8545')}/`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'md_midPrice', params: ['BTC'] }),
    });
    if ('result' in ((await res.json()) as object)) break;
    if (Date.now() > deadline) throw new Error('no BTC book within 30 s of start');
    await new Promise((r) => setTimeout(r, 200));
  }
}, 150_000);

afterAll(async () => {
  const pid = service?.pid;
  const natsPids = (() => {
    try {
      return execFileSync('pgrep', ['-f', `nats-server .*${join(dataDir, 'nats')}`])
        .toString()
        .trim()
        .split('\n')
        .map(Number)
        .filter(Boolean);
    } catch {
      return [];
    }
  })();
  if (pid && alive(pid)) {
    try {
      process.kill(-pid, 'SIGINT');
    } catch {}
    await Promise.race([outputClosed, new Promise((r) => setTimeout(r, 15_000))]);
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
  for (const n of natsPids) if (alive(n)) process.kill(n, 'SIGKILL');
  rmSync(work, { recursive: true, force: true });
}, 30_000);

/** The command with the README's ports replaced by the ones the service took. */
function localized(text: string): string {
  let out = text;
  for (const [from, to] of hosts) out = out.split(from).join(to);
  return out;
}

/** Assignments before a command, so `$KEY` means what the README made it mean. */
function prelude(upTo: Command): string {
  const before = commands.slice(0, commands.indexOf(upTo)).filter((c) => c.kind === 'assign');
  return before.map((c) => `${c.text}\n`).join('');
}

type Run = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Runs `script` in bash in its own group; `interruptOnData` sends Ctrl-C once output came. */
function run(script: string, interruptOnData = false): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: work,
      detached: true,
      env: { ...process.env, ...mdpEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const interrupt = () => {
      if (interrupted) return;
      interrupted = true;
      try {
        process.kill(-(child.pid as number), 'SIGINT');
      } catch {}
    };
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      if (interruptOnData && !interrupted) setTimeout(interrupt, 1_000);
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const guard = interruptOnData ? setTimeout(interrupt, STREAM_SECONDS * 3_000) : null;
    child.on('close', (code, signal) => {
      if (guard) clearTimeout(guard);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A JSON answer that carries an error (an error body, or a JSON-RPC error in a batch). */
function jsonError(body: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  const items = Array.isArray(parsed) ? parsed : [parsed];
  for (const item of items)
    if (item && typeof item === 'object' && (item as { error?: unknown }).error != null)
      return JSON.stringify((item as { error: unknown }).error);
  return null;
}

describe('README commands', () => {
  it('has the quick start and the commands to try', () => {
    expect(commands.filter((c) => c.kind === 'start')).toHaveLength(1);
    expect(commands.some((c) => c.kind === 'suite')).toBe(true);
    expect(runnable.filter((c) => c.kind === 'curl').length).toBeGreaterThan(0);
    expect(runnable.filter((c) => c.kind === 'curl-stream').length).toBeGreaterThan(0);
    expect(runnable.filter((c) => c.kind.startsWith('mdp')).length).toBeGreaterThan(0);
    expect(
      commands.filter((c) => c.kind === 'unknown').map((c) => c.text),
      'README commands this test does not know how to run',
    ).toEqual([]);
  });

  it.each(runnable.map((c) => [c.text, c] as const))(
    '%s',
    async (_text, command) => {
      const text = localized(command.text);
      const head = prelude(command);
      if (command.kind === 'curl') {
        const r = await run(
          `${head}${text.replace(/^curl /, "curl --write-out '\\nHTTP %{http_code}\\n' ")}`,
        );
        expect(r.code, r.stderr).toBe(0);
        const status = /\nHTTP (\d{3})\n$/.exec(r.stdout)?.[1];
        const body = r.stdout.replace(/\nHTTP \d{3}\n$/, '');
        expect(status, body).toMatch(/^2\d\d$/);
        expect(jsonError(body), body).toBeNull();
        expect(body.trim().length).toBeGreaterThan(0);
      } else if (command.kind === 'curl-stream') {
        const r = await run(`${head}${text.replace(/^curl /, `curl --max-time ${STREAM_SECONDS} `)}`);
        expect([0, 28], r.stderr).toContain(r.code);
        expect(r.stdout, 'events arrived').toMatch(/^data: \{/m);
        expect(r.stdout).not.toMatch(/^event: error$/m);
      } else if (command.kind === 'mdp-stream') {
        const r = await run(`${head}${text}`, true);
        expect(r.stdout.trim().length, `no events: ${r.stderr}`).toBeGreaterThan(0);
        // Ctrl-C (npx and bash in the same group may end by the signal itself): mdp names the position.
        expect(
          r.code === 130 || r.signal === 'SIGINT',
          `code ${r.code} signal ${r.signal}: ${r.stderr}`,
        ).toBe(true);
        expect(r.stderr).toMatch(/--from \d+/);
      } else {
        const r = await run(`${head}${text}`);
        expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
        const out = /--out\s+(\S+)/.exec(text)?.[1];
        if (out) expect(existsSync(join(work, out)), `${out} written`).toBe(true);
      }
    },
    120_000,
  );
});
