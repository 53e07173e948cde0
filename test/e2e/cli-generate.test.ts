/**
 * `mdp generate` against the real stack (app, accounts, generation worker): an asynchronous job,
 * the Parquet downloaded and verified against content_length_bytes, manifest_hash printed; on a
 * pseudo-terminal it draws progress bars in colour, in a pipe it prints neither bars nor colours.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshConfigDir, runCli, runCliOnTty } from '../support/cli.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let env: Record<string, string>;
let key: string;
const dir = freshConfigDir();

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  key = (await stack.accounts.key('quant')).key;
  env = { MDP_URL: stack.http.url, MDP_API_KEY: key, MDP_CONFIG_DIR: dir };
});

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('submits a job, downloads and verifies the artifact, prints the manifest hash (pipe: no bars, no colours)', async () => {
  const out = join(dir, 'btc.parquet');
  const r = await runCli(
    ['generate', '--symbol', 'BTC', '--duration', '1h', '--seed', '7', '--out', out, '--json'],
    env,
  );
  expect(r.code, r.stderr).toBe(0);
  const result = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(result).toMatchObject({
    status: 'completed',
    file: out,
    manifest_hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
  });
  expect(statSync(out).size).toBe(result.content_length_bytes);
  expect(result.bytes_written).toBe(result.content_length_bytes);
  expect(readFileSync(out).subarray(0, 4).toString()).toBe('PAR1');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI escapes are what the test looks for
  expect(r.stdout + r.stderr).not.toMatch(/\x1b\[|\r|█/);

  // The same manifest again: the same hash (determinism), human output names it.
  const again = await runCli(
    ['generate', '--symbol', 'BTC', '--duration', '3600', '--seed', '7', '--out', join(dir, 'b2.parquet')],
    env,
  );
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain(`manifest_hash ${result.manifest_hash}`);
  expect(again.stdout + again.stderr).not.toContain(key);
}, 180_000);

it('draws a job progress bar and a byte progress bar in colour on a terminal', async () => {
  const out = join(dir, 'tty.parquet');
  const r = await runCliOnTty(
    ['generate', '--symbol', 'ETH', '--duration', '6h', '--seed', '3', '--out', out],
    env,
  );
  expect(r.code, r.stdout).toBe(0);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI escapes are what the test looks for
  expect(r.stdout).toMatch(/\r\x1b\[2Kgenerating \[.*█.*\] +\d+% [\d,]+ \/ [\d,]+ rows \(running\)/); // redrawn in place
  expect(r.stdout).toMatch(/generating \[.*\] 100% /);
  expect(r.stdout).toMatch(/downloading \[.*\] 100% .* \/ /);
  expect(r.stdout).toContain('\x1b[32m'); // colour, on a TTY only
  expect(r.stdout).toMatch(/manifest_hash sha256:[0-9a-f]{64}/);
  expect(r.stdout).not.toContain(key);
  expect(statSync(out).size).toBeGreaterThan(0);
});

it('fails with the error body’s code and request id and a scriptable exit code', async () => {
  const bad = await runCli(['generate', '--symbol', 'BTC', '--duration', '9999d'], env);
  expect(bad.code).toBe(5);
  expect(bad.stderr).toMatch(/error: unprocessable: .*\(field duration_seconds\).*request req_[0-9a-f]{20}/);
  const usage = await runCli(['generate', '--symbol', 'BTC', '--duration', 'soon'], env);
  expect(usage.code).toBe(2);
  const noKey = await runCli(['generate', '--symbol', 'BTC', '--duration', '1h'], {
    ...env,
    MDP_API_KEY: '',
  });
  expect(noKey.code).toBe(3);
  const wrongKey = await runCli(['generate', '--symbol', 'BTC', '--duration', '1h'], {
    ...env,
    MDP_API_KEY: `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`,
  });
  expect(wrongKey.code).toBe(3);
  expect(wrongKey.stderr).toMatch(/invalid_key/);
}, 180_000); // four CLI processes, each starting tsx on a shared machine
