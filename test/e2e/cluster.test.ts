/**
 * `npm run cluster` (app/cluster.ts) as a user runs it, in a lean topology for CI (the producers and
 * two unified US replicas; `--edges`/`--regions`/`--workers` choose it): it prints the three NATS
 * nodes and both replicas' URLs; every stream and KV bucket is R3 with a peer on each other node;
 * both replicas serve the same events in the same order from one Last-Event-ID; Ctrl-C (SIGINT to
 * the launcher) stops everything, the NATS cluster last (no app process saw NATS go away), exit 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { Nats } from '../../platform/nats.ts';
import { startTestAccounts, type TestAccounts } from '../support/accounts.ts';
import { readSequences } from '../support/cluster.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { stopProcess } from '../support/process.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const dir = mkdtempSync(join(tmpdir(), 'mdp-cluster-'));
const config = testConfig({ STREAM_REPLICAS: '3' });
let launcher: ChildProcess | null = null;
let nats: Nats | null = null;
let accounts: TestAccounts | null = null;

afterAll(async () => {
  accounts?.stop();
  await nats?.nc.close();
  if (launcher) await stopProcess({ child: launcher }, 'SIGINT');
  rmSync(dir, { recursive: true, force: true });
});

it('npm run cluster: 3 NATS nodes, R3 everywhere, both unified replicas stream, Ctrl-C stops NATS last', {
  timeout: 420_000,
}, async () => {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'app/cluster.ts', '--edges', 'unified', '--regions', 'us', '--workers', '0'],
    {
      env: {
        ...process.env,
        NODE_ENV: 'test',
        API_KEY_SECRET: config.API_KEY_SECRET,
        DATA_DIR: dir,
        SIM_TRADE_RATE: '50',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  launcher = proc;
  let out = '';
  proc.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  await eventually(() => /NATS_URL=/.test(out) || proc.exitCode !== null, 300_000, 'cluster running', 250);
  expect(out).toMatch(/cluster running/);

  const natsUrl = /NATS_URL=(\S+)/.exec(out)?.[1] ?? '';
  expect(natsUrl.split(',')).toHaveLength(3);
  for (const node of ['mdp-1', 'mdp-2', 'mdp-3'])
    expect(out).toMatch(new RegExp(`${node}\\s+nats://127\\.0\\.0\\.1:\\d+`));
  const urls = ['unified-us-1', 'unified-us-2'].map(
    (name) => new RegExp(`${name}\\s+(http://\\S+/api/v1/unified/stream)`).exec(out)?.[1] ?? '',
  );
  expect(urls.every(Boolean)).toBe(true);

  // The test's own connection uses the same comma-separated URL list and STREAM_REPLICAS=3.
  nats = await connectTestNats(natsUrl, config);
  accounts = await startTestAccounts(nats, config);
  const { key } = await accounts.key('pro');
  const replicas: Record<string, number> = {};
  for await (const si of nats.jsm.streams.list())
    replicas[si.config.name] = si.config.num_replicas * 10 + (si.cluster?.replicas?.length ?? 0);
  for (const name of ['MD', 'ACCOUNTS', 'JOBS', 'KV_keys', 'KV_leases', 'KV_stream_leases'])
    expect(replicas[name], name).toBe(32);
  expect(Object.values(replicas).every((r) => r === 32)).toBe(true);

  // Both replicas, from one position, say the same sequences in the same order.
  const from = await lastSeq(nats);
  const [a, b] = await Promise.all(urls.map((u) => readSequences(`${u}?coin=BTC`, key, from, 40)));
  expect(a).toEqual(b);
  expect(a?.[0]).toBeGreaterThan(from);

  proc.kill('SIGINT');
  expect(await exited).toBe(0);
  expect(out).toMatch(/cluster stopped/);
  const logs = readdirSync(join(dir, 'cluster', 'logs')).map((f) =>
    readFileSync(join(dir, 'cluster', 'logs', f), 'utf8'),
  );
  expect(logs.length).toBe(4); // the simulator, the derived producer, two unified replicas
  for (const log of logs) {
    expect(log).toMatch(/"msg":"shutting down"/);
    expect(log).not.toMatch(/"nats":"disconnect"/);
  }
});
