/**
 * The container image, with or without a Docker engine. Without one, the image is rebuilt the way
 * its Dockerfile says, as files: the build context that `.dockerignore` lets through is copied to
 * a fresh directory, the RUN lines of the Dockerfile's build stage run there (npm ci, npm run
 * build, npm prune --omit=dev: what the image holds), and the Dockerfile's own ENTRYPOINT + CMD
 * run there with its ENV against a private nats-server, until the process says `running` and
 * answers /healthz. With an engine, `docker build` runs too.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { killAll, stopProcess } from '../support/process.ts';

const root = join(import.meta.dirname, '..', '..');
const dockerfile = readFileSync(join(root, 'compose', 'Dockerfile'), 'utf8');
const hasDocker = spawnSync('docker', ['version'], { stdio: 'ignore' }).status === 0;

/** A `.dockerignore` line as a path matcher (the subset of Docker's syntax this file uses). */
function ignoreMatcher(text: string): (path: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((p) => {
      const anyDepth = p.startsWith('**/');
      const body = (anyDepth ? p.slice(3) : p).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
      return new RegExp(`^${anyDepth ? '(.*/)?' : ''}${body}(/.*)?$`);
    });
  return (path) => patterns.some((re) => re.test(path));
}

/** JSON-form instructions of the Dockerfile (`ENTRYPOINT ["a","b"]`), and its ENV pairs. */
function instruction(name: string): string[] {
  const line = dockerfile.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`Dockerfile has no ${name}`);
  return JSON.parse(line.slice(name.length + 1));
}
function envOf(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of dockerfile.split('\n').filter((l) => l.startsWith('ENV ')))
    for (const pair of line.slice(4).trim().split(/\s+/)) {
      const [k, v] = pair.split('=');
      if (k && v !== undefined) env[k] = v;
    }
  return env;
}

describe('the container image', () => {
  const ignored = ignoreMatcher(readFileSync(join(root, '.dockerignore'), 'utf8'));

  it('keeps local state, history and host packages out of the build context', () => {
    for (const p of [
      '.data/demo-api-key',
      '.data/nats/jetstream/x',
      '.git/HEAD',
      'node_modules/x/index.js',
      // Secrets never reach an image: the balancer's TLS key and any key file.
      'compose/certs/edge.pem',
      'compose/certs/edge.key',
      'certs/nats.key',
    ])
      expect(ignored(p), p).toBe(true);
    for (const p of ['app/main.ts', 'package.json', 'package-lock.json', 'contracts/errors.ts'])
      expect(ignored(p), p).toBe(false);
  });

  it('installs before NODE_ENV=production can change what npm installs', () => {
    const lines = dockerfile.split('\n');
    const install = lines.findIndex((l) => /RUN npm ci/.test(l));
    const prodEnv = lines.findIndex((l) => /^ENV .*NODE_ENV=production/.test(l));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(prodEnv).toBeGreaterThan(install);
  });

  describe('rebuilt as files and started with its own entrypoint', () => {
    let nats: TestNats;
    let dir: string;
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      nats = await startTestNats();
      dir = mkdtempSync(join(tmpdir(), 'mdp-image-'));
      const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: root })
        .toString()
        .split('\n')
        .filter((f) => f && !ignored(f));
      for (const f of files) {
        mkdirSync(dirname(join(dir, f)), { recursive: true });
        try {
          copyFileSync(join(root, f), join(dir, f));
        } catch {} // listed but deleted in the work tree
      }
      // The build stage's RUN lines (those before the second FROM), from the package cache where it can.
      const lines = dockerfile.split('\n');
      const froms = lines.flatMap((l, i) => (l.startsWith('FROM ') ? [i] : []));
      const runtimeStage = froms.at(-1) ?? lines.length;
      for (const line of lines.slice(0, runtimeStage).filter((l) => l.startsWith('RUN ')))
        execFileSync('sh', ['-c', line.slice(4)], {
          cwd: dir,
          stdio: 'ignore',
          env: { ...process.env, npm_config_prefer_offline: 'true' },
        });
    }, 180_000);

    afterAll(async () => {
      await killAll(children.map((child) => ({ child })));
      await nats?.cleanup();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('runs every role in production mode and answers /healthz', async () => {
      const [exe, ...args] = [...instruction('ENTRYPOINT'), ...instruction('CMD')];
      expect(exe).toBe('node');
      const child = spawn(process.execPath, args, {
        cwd: dir,
        env: {
          PATH: process.env.PATH ?? '',
          ...envOf(),
          DATA_DIR: join(dir, '.state'),
          NATS_URL: nats.url,
          API_KEY_SECRET: 'image-test-secret-0123456789',
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
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let stderr = '';
      child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const lines: Record<string, unknown>[] = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "running": ${stderr.slice(-2_000)}`)), 60_000);
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr.slice(-2_000)}`)));
        createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
          try {
            lines.push(JSON.parse(l));
          } catch {}
          if (lines.at(-1)?.msg === 'running') {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const unified = lines.find((l) => l.msg === 'unified stream listening')?.url as string;
      const health = await fetch(new URL('/healthz', unified));
      expect(health.status).toBe(200);
      // Production: no demo key was made.
      expect(lines.some((l) => String(l.msg).includes('demo'))).toBe(false);
      await stopProcess({ child }, 'SIGTERM');
    });
  });

  it.skipIf(!hasDocker)('builds with docker (skipped: no Docker engine on this machine)', () => {
    execFileSync('docker', ['build', '-f', 'compose/Dockerfile', '-t', 'mdp:test', '.'], {
      cwd: root,
      stdio: 'inherit',
    });
  });
});
