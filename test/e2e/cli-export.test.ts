/**
 * `mdp export` against the real stack (app, accounts, worker): stored events of a range exported
 * as an asynchronous job, the file downloaded and verified (length and SHA-256), read back with
 * DuckDB, the exporting account's own events (on `OWN`) among the rows and never another
 * account's; on a pseudo-terminal it draws the job and download progress bars; bad input exits with
 * the error body's code and request id.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MarketEvent } from '../../contracts/events.ts';
import { ownSubject } from '../../contracts/subjects.ts';
import { freshConfigDir, runCli, runCliOnTty } from '../support/cli.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;
let env: Record<string, string>;
let key: string;
let accountId: string;
let from = 0;
let to = 0;
const dir = freshConfigDir();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
  ({ key, accountId } = await stack.accounts.key('pro'));
  const other = await stack.accounts.key('pro');
  const ownOf = (account: string) => (e: MarketEvent) =>
    ownSubject(account, e.source, e.symbol, e.event_type);
  env = { MDP_URL: stack.http.url, MDP_API_KEY: key, MDP_CONFIG_DIR: dir };
  await publishNow(stack.nats.js, [trade('BTC', 0), trade('ETH', 1)]);
  await sleep(20);
  from = Date.now();
  await sleep(5);
  // 2,000 events: 1,000 BTC (trades and books) in the range, 1,000 ETH.
  const events = Array.from({ length: 2_000 }, (_, i) =>
    i % 2 ? (i % 4 === 1 ? trade('BTC', 10 + i) : book('BTC', 10 + i)) : trade('ETH', 10 + i),
  );
  await publishNow(stack.nats.js, events.slice(0, 1_000));
  // 10 own BTC trades of the exporting account and 10 of another one, in the range, between the others.
  const own = (base: number) => Array.from({ length: 10 }, (_, i) => trade('BTC', base + i));
  await publishNow(stack.nats.js, own(7_000), ownOf(accountId));
  await publishNow(stack.nats.js, own(8_000), ownOf(other.accountId));
  await publishNow(stack.nats.js, events.slice(1_000));
  await sleep(5);
  to = Date.now();
  await sleep(20);
  await publishNow(stack.nats.js, [trade('BTC', 5_000)]);
}, 60_000);

afterAll(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const countRows = async (sql: string): Promise<number> => {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const reader = await conn.runAndReadAll(sql);
    return Number(reader.getRows()[0]?.[0]);
  } finally {
    conn.closeSync();
    db.closeSync();
  }
};

it('exports a range to Parquet, verified (pipe: no bars, no colours)', async () => {
  const out = join(dir, 'btc.parquet');
  const r = await runCli(
    [
      'export',
      '--coin',
      'BTC',
      '--from',
      new Date(from).toISOString(),
      '--to',
      String(to),
      '--out',
      out,
      '--json',
    ],
    env,
  );
  expect(r.code, r.stderr).toBe(0);
  const result = JSON.parse(r.stdout) as Record<string, unknown>;
  expect(result).toMatchObject({ format: 'parquet', row_count: 1_010, file: out });
  const bytes = readFileSync(out);
  expect(bytes.length).toBe(result.content_length_bytes);
  expect(createHash('sha256').update(bytes).digest('hex')).toBe(result.sha256);
  expect(await countRows(`SELECT count(*) FROM read_parquet('${out}') WHERE symbol = 'BTC'`)).toBe(1_010);
  // The account's own trades, from OWN, and nobody else's.
  expect(await countRows(`SELECT count(*) FROM read_parquet('${out}') WHERE owner = '${accountId}'`)).toBe(
    10,
  );
  expect(await countRows(`SELECT count(*) FROM read_parquet('${out}') WHERE owner IS NOT NULL`)).toBe(10);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI escapes are what the test looks for
  expect(r.stdout + r.stderr).not.toMatch(/\x1b\[|\r|█/);
}, 60_000);

it('draws the export and download progress bars on a terminal; CSV', async () => {
  const out = join(dir, 'both.csv');
  const r = await runCliOnTty(
    [
      'export',
      '--coin',
      'BTC,ETH',
      '--from',
      String(from),
      '--to',
      String(to),
      '--format',
      'csv',
      '--out',
      out,
    ],
    env,
  );
  expect(r.code, r.stdout).toBe(0);
  expect(r.stdout).toMatch(/exporting \[.*\] 100% /);
  expect(r.stdout).toMatch(/downloading \[.*\] 100% .* \/ /);
  expect(r.stdout).toMatch(/both\.csv: 2,010 rows, .*verified\)/);
  expect(r.stdout).toMatch(/sha256 [0-9a-f]{64}/);
  expect(r.stdout).not.toContain(key);
  expect(readFileSync(out, 'utf8').split('\n')[0]).toMatch(/^seq,stored_ms,owner,source,symbol,event_type,/);
}, 60_000);

it('fails with the error body’s code and request id and a scriptable exit code', async () => {
  const bad = await runCli(['export', '--coin', 'BTC', '--from', String(to), '--to', String(from)], env);
  expect(bad.code).toBe(5);
  expect(bad.stderr).toMatch(/error: invalid_time_range: .*request req_[0-9a-f]{20}/);
  const usage = await runCli(['export', '--from', String(from), '--to', String(to)], env);
  expect(usage.code).toBe(2);
  const format = await runCli(
    ['export', '--coin', 'BTC', '--from', '1', '--to', '2', '--format', 'xlsx'],
    env,
  );
  expect(format.code).toBe(2);
});
