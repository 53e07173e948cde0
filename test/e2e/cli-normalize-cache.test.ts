/**
 * `mdp normalize` and `mdp cache` against the real app: a 2.5 MB file of Binance trades (JSON
 * lines) and a JSON array file are streamed in requests of at most 1 MB, cached, listed, replayed,
 * exported as Parquet and deleted; a bad payload is reported with its file and index.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshConfigDir, runCli } from '../support/cli.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let env: Record<string, string>;
const dir = freshConfigDir();

const trade = (i: number) => ({
  e: 'trade',
  E: 1_767_225_600_000 + i,
  s: 'BTCUSDT',
  t: 1_000_000 + i,
  p: (60_000 + (i % 100)).toFixed(2),
  q: '0.01000000',
  T: 1_767_225_600_000 + i,
  m: i % 3 === 0,
  M: true,
});

beforeAll(async () => {
  stack = await startStack();
  env = {
    MDP_URL: stack.http.url,
    MDP_API_KEY: (await stack.accounts.key('quant')).key,
    MDP_CONFIG_DIR: dir,
  };
});

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('normalizes large files in ≤ 1 MB requests, then lists, replays, exports and deletes the caches', async () => {
  const lines = join(dir, 'trades.jsonl');
  writeFileSync(lines, `${Array.from({ length: 18_000 }, (_, i) => JSON.stringify(trade(i))).join('\n')}\n`);
  expect(statSync(lines).size).toBeGreaterThan(2_000_000);
  const array = join(dir, 'more.json');
  const arrayPayloads = [trade(20_000), { nonsense: true }, trade(20_001)];
  writeFileSync(array, JSON.stringify(arrayPayloads, null, 2));
  const events = join(dir, 'events.jsonl');

  const r = await runCli(
    [
      'normalize',
      '--source',
      'binance',
      '--symbol',
      'BTC',
      '--cache',
      '--out',
      events,
      lines,
      array,
      '--json',
    ],
    env,
  );
  expect(r.code, r.stderr).toBe(0);
  const summary = JSON.parse(r.stdout) as {
    payloads: number;
    events: number;
    requests: number;
    cache_keys: string[];
    rejected: { file: string; index: number; error: string }[];
  };
  expect(summary).toMatchObject({ payloads: 18_003, events: 18_002 });
  expect(summary.requests).toBeGreaterThanOrEqual(4); // > 2 MB of JSON lines at ≤ 1 MB per request, plus the array
  expect(summary.rejected).toEqual([expect.objectContaining({ file: array, index: 1 })]);
  expect(summary.cache_keys).toHaveLength(summary.requests);
  const written = readFileSync(events, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(written).toHaveLength(18_002);
  expect(written[0]).toMatchObject({
    event_type: 'trade',
    source: 'binance',
    symbol: 'BTC',
    side: 'sell',
    venue_trade_id: '1000000',
  });

  const ls = await runCli(['cache', 'ls', '--json'], env);
  expect(ls.code).toBe(0);
  const stats = JSON.parse(ls.stdout) as {
    caches: { cache_key: string; events: number }[];
    totals: { events: number };
  };
  expect(new Set(stats.caches.map((c) => c.cache_key))).toEqual(new Set(summary.cache_keys));
  expect(stats.totals.events).toBe(18_002);
  const human = await runCli(['cache', 'ls'], env);
  expect(human.stdout).toMatch(/^CACHE KEY\s+SOURCE\s+SYMBOL\s+EVENTS/);

  const last = summary.cache_keys.at(-1) as string;
  const replay = await runCli(['cache', 'replay', last, '--json'], env);
  expect(replay.code, replay.stderr).toBe(0);
  const replayed = replay.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(replayed.map((e) => e.venue_trade_id)).toEqual(['1020000', '1020001']);
  expect(JSON.parse(replay.stderr)).toMatchObject({ events: 2, complete: true });
  const resumed = await runCli(
    ['cache', 'replay', last, '--from', String(JSON.parse(replay.stderr).last_seq - 1)],
    env,
  );
  expect(
    resumed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).venue_trade_id),
  ).toEqual(['1020001']);

  const parquet = join(dir, 'c.parquet');
  const exp = await runCli(
    ['cache', 'export', summary.cache_keys[0] as string, '--out', parquet, '--json'],
    env,
  );
  expect(exp.code, exp.stderr).toBe(0);
  expect(JSON.parse(exp.stdout).bytes).toBe(statSync(parquet).size);
  expect(readFileSync(parquet).subarray(0, 4).toString()).toBe('PAR1');

  const rm = await runCli(['cache', 'rm', last], env);
  expect(rm.code).toBe(0);
  const gone = await runCli(['cache', 'replay', last], env);
  expect(gone.code).toBe(4);
  expect(gone.stderr).toMatch(/error: not_found: .*HTTP 404, request req_/);
  const all = await runCli(['cache', 'rm', '--all', '--json'], env);
  expect(JSON.parse(all.stdout)).toEqual({ deleted: summary.cache_keys.length - 1 });
  expect(JSON.parse((await runCli(['cache', 'ls', '--json'], env)).stdout).caches).toEqual([]);
}, 300_000); // a dozen CLI processes, each starting tsx on a shared machine

it('refuses bad input with exit codes: usage 2, nothing usable 5', async () => {
  const junk = join(dir, 'junk.jsonl');
  writeFileSync(junk, '{"nonsense":1}\n{"nonsense":2}\n');
  const r = await runCli(['normalize', '--source', 'binance', junk], env);
  expect(r.code).toBe(5);
  expect(r.stdout).toMatch(/2 payloads → 0 events in 1 requests, 2 rejected/);
  expect((await runCli(['normalize', '--source', 'nasdaq', junk], env)).code).toBe(2);
  expect((await runCli(['normalize', '--source', 'binance'], env)).code).toBe(2);
  writeFileSync(junk, '{"e":"trade",\n');
  expect((await runCli(['normalize', '--source', 'binance', junk], env)).code).toBe(2);
}, 120_000);
