/**
 * `mdp login` and `mdp keys` against the real console: the session and a saved key live in a
 * config file of mode 0600 (directory 0700); a key created with --save is never printed; the saved
 * key works for later commands until `keys revoke`, then exit 3. Without a session: exit 3. A key
 * made with --expires-at carries it (console API, key list); a past one is refused (422).
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshConfigDir, runCli } from '../support/cli.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
const dir = freshConfigDir();
const email = `cli-${process.pid}@example.com`;
const password = 'Str0ng-Passw0rd!';

beforeAll(async () => {
  stack = await startStack();
  await stack.accounts.service.register({ email, password, plan: 'quant', jp_access: false });
});

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('logs in, creates a saved key without printing it, uses it, lists and revokes it', async () => {
  const env = { MDP_URL: stack.http.url, MDP_CONFIG_DIR: dir, MDP_API_KEY: '' };
  expect((await runCli(['keys', 'ls'], env)).code).toBe(3); // not logged in

  const wrong = await runCli(['login', '--email', email, '--password-stdin'], env, 'not-the-password\n');
  expect(wrong.code).toBe(3);
  expect(wrong.stderr).toMatch(/invalid_credentials.*HTTP 401, request req_/);

  const login = await runCli(['login', '--email', email, '--password-stdin', '--json'], env, `${password}\n`);
  expect(login.code, login.stderr).toBe(0);
  const file = join(dir, 'config.json');
  expect(JSON.parse(login.stdout)).toMatchObject({ email, config: file });
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(statSync(dir).mode & 0o777).toBe(0o700);
  const session = (JSON.parse(readFileSync(file, 'utf8')) as { session: { token: string } }).session.token;
  expect(login.stdout + login.stderr).not.toContain(session);

  const created = await runCli(
    ['keys', 'create', '--name', 'laptop', '--scopes', 'mcp,generate', '--save', '--json'],
    env,
  );
  expect(created.code, created.stderr).toBe(0);
  const meta = JSON.parse(created.stdout) as { key_id: string; prefix: string; saved: boolean; key?: string };
  expect(meta).toMatchObject({ name: 'laptop', saved: true, scopes: ['mcp', 'generate'] });
  expect(meta.key).toBeUndefined();
  const saved = (JSON.parse(readFileSync(file, 'utf8')) as { api_key: string }).api_key;
  expect(saved).toMatch(/^mdp_/);
  expect(created.stdout + created.stderr).not.toContain(saved);
  expect(statSync(file).mode & 0o777).toBe(0o600);

  // The saved key is used when MDP_API_KEY is unset.
  const ls = await runCli(['cache', 'ls', '--json'], env);
  expect(ls.code, ls.stderr).toBe(0);
  expect(ls.stdout + ls.stderr).not.toContain(saved);

  const keys = await runCli(['keys', 'ls', '--json'], env);
  expect(JSON.parse(keys.stdout)).toEqual([
    expect.objectContaining({ key_id: meta.key_id, status: 'active' }),
  ]);
  expect(keys.stdout).not.toContain(saved);
  const table = await runCli(['keys', 'ls'], env);
  expect(table.stdout).toMatch(new RegExp(`^KEY ID.*\\n${meta.key_id}\\s+laptop\\s+${meta.prefix}`));

  const shown = await runCli(['keys', 'create', '--name', 'ci'], env);
  expect(shown.stdout).toMatch(/the key, shown this once:\nmdp_[0-9A-Za-z]+\n/); // without --save: the only time it appears

  expect((await runCli(['keys', 'revoke', meta.key_id], env)).code).toBe(0);
  const refused = await runCli(['cache', 'ls'], env);
  expect(refused.code).toBe(3);
  expect(refused.stderr).toMatch(/key_revoked/);
  expect(refused.stderr).not.toContain(saved);

  expect((await runCli(['keys', 'create', '--name', 'x', '--scopes', 'root'], env)).code).toBe(2);

  // --expires-at goes through the console API into the key record and back.
  const until = new Date(Date.now() + 86_400_000).toISOString();
  const expiring = await runCli(['keys', 'create', '--name', 'temp', '--expires-at', until, '--json'], env);
  expect(expiring.code, expiring.stderr).toBe(0);
  const temp = JSON.parse(expiring.stdout) as { key_id: string; expires_at: string };
  expect(temp.expires_at).toBe(until);
  const listed = JSON.parse((await runCli(['keys', 'ls', '--json'], env)).stdout) as Record<
    string,
    unknown
  >[];
  expect(listed.find((k) => k.key_id === temp.key_id)).toMatchObject({ expires_at: until });
  expect((await runCli(['keys', 'create', '--name', 'y', '--expires-at', 'tomorrow'], env)).code).toBe(2);
  const past = new Date(Date.now() - 60_000).toISOString();
  const refusedPast = await runCli(['keys', 'create', '--name', 'z', '--expires-at', past], env);
  expect(refusedPast.code).not.toBe(0);
  expect(refusedPast.stderr).toMatch(/unprocessable/);
  expect((await runCli(['logout'], env)).code).toBe(0);
  expect(JSON.parse(readFileSync(file, 'utf8')).session).toBeUndefined();
  expect((await runCli(['keys', 'ls'], env)).code).toBe(3);
}, 400_000); // fifteen CLI processes, each starting tsx on a shared machine

it('prints help for every command and exits 2 on a bad command line', async () => {
  const env = { MDP_CONFIG_DIR: dir };
  const help = await runCli(['--help'], env);
  expect(help.code).toBe(0);
  for (const c of [
    'stream',
    'sync',
    'generate',
    'normalize',
    'cache ls',
    'cache export',
    'cache replay',
    'cache rm',
    'keys ls',
    'keys create',
    'keys revoke',
    'login',
  ])
    expect(help.stdout).toContain(`  ${c} `);
  expect(help.stdout).toMatch(/Exit codes:/);
  const sub = await runCli(['cache', 'replay', '--help'], env);
  expect(sub).toMatchObject({
    code: 0,
    stdout: expect.stringMatching(/^Usage: mdp cache replay \[options\] CACHE_KEY/),
  });
  expect((await runCli(['keys'], env)).code).toBe(2);
  expect((await runCli(['frobnicate'], env)).code).toBe(2);
  expect((await runCli(['stream', '--from', 'yesterday'], { ...env, MDP_API_KEY: 'x' })).code).toBe(2);
}, 120_000);
