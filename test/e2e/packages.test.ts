/**
 * The packages a user installs: `@mdp/contracts`, `@mdp/client` and `@mdp/cli`, each built
 * (scripts/build.mjs --packages) and packed with `npm pack`, then installed together with
 * `npm install <tarballs>` in an empty directory, away from the repository. There, the client
 * imports and works (an SSE message parsed, a JSON-RPC call batched with a limit read from
 * `@mdp/contracts` at run time, a gRPC stream that finds price.proto and retries a closed port),
 * its declarations type-check a consumer (contract types included, not `any`), and the installed
 * `mdp --help` and `mdp --version` run with no TypeScript loader.
 *
 * The repository's own files are not built in place: the three packages, tsconfig.json and the
 * build script are copied to a temporary tree whose node_modules links the repository's installed
 * packages (and the copies for @mdp/*), so a test running at the same time sees no dist/ appear.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const PACKAGES = [
  { dir: 'contracts', name: '@mdp/contracts' },
  { dir: 'clients/typescript', name: '@mdp/client' },
  { dir: 'clients/cli', name: '@mdp/cli' },
] as const;
const VERSION = JSON.parse(execFileSync('git', ['show', ':package.json'], { cwd: root }).toString()).version;

type Packed = { filename: string; files: { path: string }[] };

let work: string;
let install: string;
const packed = new Map<string, Packed>();

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  }).toString();

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'mdp-packages-'));
  const stage = join(work, 'repo');
  const files = execFileSync(
    'git',
    [
      'ls-files',
      '-co',
      '--exclude-standard',
      '--',
      ...PACKAGES.map((p) => p.dir),
      'tsconfig.json',
      'scripts/build.mjs',
    ],
    { cwd: root },
  )
    .toString()
    .split('\n')
    .filter(Boolean);
  for (const f of files) {
    mkdirSync(dirname(join(stage, f)), { recursive: true });
    try {
      copyFileSync(join(root, f), join(stage, f));
    } catch {} // listed but deleted in the work tree
  }
  mkdirSync(join(stage, 'node_modules', '@mdp'), { recursive: true });
  for (const entry of readdirSync(join(root, 'node_modules')))
    if (entry !== '@mdp') symlinkSync(join(root, 'node_modules', entry), join(stage, 'node_modules', entry));
  for (const p of PACKAGES) symlinkSync(join(stage, p.dir), join(stage, 'node_modules', p.name));

  execFileSync(process.execPath, [join(stage, 'scripts/build.mjs'), '--packages'], {
    cwd: stage,
    stdio: 'pipe',
  });
  const tarballs = join(work, 'tarballs');
  mkdirSync(tarballs);
  for (const p of PACKAGES) {
    const [info] = JSON.parse(npm(['pack', '--json', '--pack-destination', tarballs], join(stage, p.dir)));
    packed.set(p.name, info);
  }

  install = join(work, 'install');
  mkdirSync(install);
  writeFileSync(join(install, 'package.json'), '{ "name": "mdp-install-check", "private": true }\n');
  npm(
    [
      'install',
      '--prefer-offline',
      ...PACKAGES.map((p) => join(tarballs, packed.get(p.name)?.filename ?? '')),
    ],
    install,
  );
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Runs an ES module in the install directory; its stdout. */
function runModule(source: string): string {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    cwd: install,
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return r.stdout;
}

describe('npm pack', () => {
  it('packs compiled JavaScript and declarations, no TypeScript source; price.proto with the contracts', () => {
    for (const p of PACKAGES) {
      const paths = packed.get(p.name)?.files.map((f) => f.path) ?? [];
      expect(paths, p.name).toContain('package.json');
      expect(
        paths.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')),
        p.name,
      ).toEqual([]);
      expect(
        paths.filter((f) => !/^(dist\/|bin\/|proto\/|package\.json$|README)/.test(f)),
        p.name,
      ).toEqual([]);
    }
    const contracts = packed.get('@mdp/contracts')?.files.map((f) => f.path);
    expect(contracts).toContain('proto/price.proto');
    expect(contracts).toContain('dist/errors.js');
    expect(contracts).toContain('dist/events.d.ts');
    const client = packed.get('@mdp/client')?.files.map((f) => f.path);
    for (const entry of ['index', 'grpc', 'disk']) {
      expect(client).toContain(`dist/${entry}.js`);
      expect(client).toContain(`dist/${entry}.d.ts`);
    }
    expect(packed.get('@mdp/cli')?.files.map((f) => f.path)).toEqual(
      expect.arrayContaining(['bin/mdp.js', 'dist/main.js']),
    );
  });
});

describe('installed from the tarballs in an empty directory', () => {
  it('the client imports, parses an SSE message and batches a JSON-RPC call', () => {
    const out = runModule(`
      import { CLIENT_VERSION, JsonRpcClient, SseParser } from '@mdp/client';
      const parsed = [];
      new SseParser().feed('id: 7\\nevent: trade\\ndata: {"p":1}\\n\\n', parsed);
      const bodies = [];
      const fetch = async (_url, init) => {
        const calls = JSON.parse(init.body);
        bodies.push(calls);
        const list = Array.isArray(calls) ? calls : [calls];
        const res = list.map((c) => ({ jsonrpc: '2.0', id: c.id, result: '0x2a' }));
        return new Response(JSON.stringify(Array.isArray(calls) ? res : res[0]), {
          headers: { 'content-type': 'application/json' },
        });
      };
      const rpc = new JsonRpcClient({ url: 'http://127.0.0.1:1', key: 'k', fetch });
      const [a, b] = await Promise.all([rpc.blockNumber(), rpc.call('eth_chainId')]);
      console.log(JSON.stringify({ version: CLIENT_VERSION, parsed, a, b, requests: rpc.requests }));
    `);
    const r = JSON.parse(out);
    expect(r.version).toBe(VERSION);
    expect(r.parsed).toEqual([expect.objectContaining({ id: '7', event: 'trade', data: '{"p":1}' })]);
    expect(r.a).toBe(42);
    expect(r.b).toBe('0x2a');
    expect(r.requests).toBe(1);
  });

  it('the gRPC entry finds price.proto: a stream to a closed port yields reconnecting notices, not an error', () => {
    const out = runModule(`
      import { streamDisk } from '@mdp/client/disk';
      import { streamGrpc } from '@mdp/client/grpc';
      if (typeof streamDisk !== 'function') throw new Error('no streamDisk');
      // A missing proto would end the iterator with ENOENT before any notice.
      const items = [];
      for await (const item of streamGrpc({ target: '127.0.0.1:1', key: 'k', retryMs: 1 })) {
        items.push({ type: item.type, attempt: item.attempt, code: item.error?.code });
        if (items.length === 2) break;
      }
      console.log(JSON.stringify(items));
    `);
    expect(JSON.parse(out)).toEqual([
      { type: 'reconnecting', attempt: 1, code: 'network_error' },
      { type: 'reconnecting', attempt: 2, code: 'network_error' },
    ]);
  });

  it("the client's declarations type-check a consumer, contract types included", () => {
    writeFileSync(
      join(install, 'consumer.ts'),
      [
        "import { CLIENT_VERSION, type Exchange, MdpError, type Preset } from '@mdp/client';",
        'export const v: string = CLIENT_VERSION;',
        "export const e: Exchange = 'binance';",
        '// @ts-expect-error not a venue: the type comes from @mdp/contracts, not `any`',
        "export const bad: Exchange = 'no-such-venue';",
        "export const preset: Preset['name'] | undefined = undefined;",
        "export const err = new MdpError('key_revoked', 'x'); // an ErrorCode of @mdp/contracts",
        '',
      ].join('\n'),
    );
    // A consumer's own settings, nothing of the repository's: strict, Node's ESM resolution.
    const compilerOptions = {
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      types: [],
    };
    writeFileSync(
      join(install, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['consumer.ts'] }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', install], {
      cwd: install,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(tsc.stdout).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('mdp --help and mdp --version run from the installed bin, with no TypeScript loader installed', () => {
    const installed = readdirSync(join(install, 'node_modules'));
    expect(installed).not.toContain('tsx');
    expect(installed).not.toContain('typescript');
    const bin = join(install, 'node_modules/.bin/mdp');
    const help = spawnSync(bin, ['--help'], { cwd: install, encoding: 'utf8', timeout: 30_000 });
    expect(help.stderr).toBe('');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: mdp <command>');
    const stream = spawnSync(bin, ['stream', '--help'], { cwd: install, encoding: 'utf8', timeout: 30_000 });
    expect(stream.status).toBe(0);
    expect(stream.stdout).toContain('Usage: mdp stream');
    const version = spawnSync(bin, ['--version'], { cwd: install, encoding: 'utf8', timeout: 30_000 });
    expect(version.stdout.trim()).toContain(VERSION);
  });
});
