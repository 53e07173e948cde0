/**
 * `mdp sync` and `mdp stream` against a real unified gateway and a real disk-sync edge process with
 * the real key guard, while events are published: sync (over each transport) is killed (SIGKILL)
 * mid-write, restarted with another encoding, interrupted and restarted again, and its directory
 * holds every sequence exactly once in rotated files;
 * stream's Ctrl-C prints the last sequence and `--from` resumes right after it. On a terminal,
 * sync draws its progress line. The key is never printed.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readSegment } from '../../clients/cli/src/sync/recover.ts';
import { listSegments } from '../../clients/cli/src/sync/segments.ts';
import { freshConfigDir, runCli, startCli, startCliOnTty } from '../support/cli.ts';
import { startDisksyncEdge } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { killAll, type ServiceProcess, stopProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let stack: TestStack;
let gw: TestGateway;
let env: Record<string, string>;
let key: string;
const dir = freshConfigDir();
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  stack = await startStack();
  gw = await startTestGateway(stack.server.url, { SSE_RETRY_MS: '100' }, { guard: 'keys' });
  const disk = startDisksyncEdge(stack.server.url, stack.config.API_KEY_SECRET, 'us', {}, processes);
  key = (await stack.accounts.key('quant')).key;
  env = {
    MDP_URL: stack.http.url,
    MDP_STREAM_URL: gw.url,
    MDP_DISK_URL: (await disk.url).replace(/^http/, 'ws'),
    MDP_API_KEY: key,
    MDP_CONFIG_DIR: dir,
  };
});

afterAll(async () => {
  await killAll(processes);
  await gw?.close();
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

const storedSeqs = (out: string) => listSegments(out).flatMap((s) => readSegment(s).seqs);

it.each(['unified', 'disk'])(
  'keeps a rotated copy over %s that survives a kill and restarts with no gap and no duplicate',
  async (via) => {
    const out = join(dir, `feed-${via}`);
    const publisher = publishAtRate(stack.nats.js, ['ETH'], 200);
    const args = ['sync', '--out', out, '--coin', 'ETH', '--rotate-mb', '0.02', '--via', via];

    const first = startCli([...args, '--from', '0'], env);
    await eventually(async () => listSegments(out).length >= 3, 30_000);
    await stopProcess(first); // mid-write: a partial last record is possible

    const second = startCli([...args, '--encoding', 'msgpack'], env);
    await eventually(
      async () => listSegments(out).filter((s) => s.encoding === 'msgpack').length >= 2,
      30_000,
    );
    second.child.kill('SIGINT');
    const stopped = await second.exited;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toMatch(/stopped after [\d,]+ events; on disk up to sequence \d+/);

    // On a terminal: the progress line (events, bytes, lag, sequence, file), redrawn in place.
    const tty = startCliOnTty([...args], env);
    await eventually(
      async () => /synced [\d,]+ events · .* · lag [\d.]+ s · seq \d+/.test(tty.output()),
      30_000,
    );
    await publisher.stop();
    const last = await lastSeq(stack.nats);
    await eventually(
      async () => storedSeqs(out).at(-1) === last || tty.output().includes(`seq ${last}`),
      30_000,
    );
    tty.signal('SIGTERM');
    const ended = await tty.exited;
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ANSI escapes are what the test looks for
    expect(ended.stdout).toMatch(/\r\x1b\[2Ksynced/);

    const seqs = storedSeqs(out);
    expect(seqs).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect(listSegments(out).length).toBeGreaterThanOrEqual(6);
    expect(new Set(listSegments(out).map((s) => s.encoding))).toEqual(new Set(['jsonl', 'msgpack']));
    expect(readdirSync(out).every((f) => f.startsWith('seg-'))).toBe(true);
    for (const r of [stopped, ended]) expect(r.stdout + r.stderr).not.toContain(key);
  },
);

it('sync over disk-sync with a Pro key ends with exit 3 and says to use --via unified', async () => {
  const pro = (await stack.accounts.key('pro')).key;
  const r = await runCli(['sync', '--out', join(dir, 'feed-pro'), '--coin', 'ETH'], {
    ...env,
    MDP_API_KEY: pro,
  });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain('--via unified');
  expect(r.stdout + r.stderr).not.toContain(pro);
});

it('streams live events; Ctrl-C prints the last sequence and --from resumes right after it', async () => {
  const base = await lastSeq(stack.nats);
  const publisher = publishAtRate(stack.nats.js, ['BTC'], 100);
  const first = startCli(['stream', '--coin', 'BTC', '--from', String(base), '--json'], env);
  await eventually(async () => first.stdout().split('\n').length > 30, 30_000);
  first.child.kill('SIGINT');
  const r1 = await first.exited;
  expect(r1.code).toBe(130);
  const lines1 = r1.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; symbol: string });
  const resumeFrom = (JSON.parse(r1.stderr.trim().split('\n').at(-1) as string) as { last_seq: number })
    .last_seq;
  expect(resumeFrom).toBe(lines1.at(-1)?.seq);

  const second = startCli(['stream', '--coin', 'BTC', '--from', String(resumeFrom), '--format', 'json'], env);
  await eventually(async () => second.stdout().split('\n').length > 30, 30_000);
  await publisher.stop();
  const last = await lastSeq(stack.nats);
  await eventually(async () => second.stdout().includes(`{"seq":${last},`), 30_000);
  second.child.kill('SIGINT');
  const r2 = await second.exited;
  const lines2 = r2.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; symbol: string });
  expect(r2.stderr).toContain(`last sequence ${last}: resume with --from ${last}`);

  const seqs = [...lines1, ...lines2].map((e) => e.seq);
  expect(seqs).toEqual(Array.from({ length: last - base }, (_, i) => base + 1 + i));
  expect([...lines1, ...lines2].every((e) => e.symbol === 'BTC')).toBe(true);
  expect(r1.stdout + r1.stderr + r2.stdout + r2.stderr).not.toContain(key);
});

it('ends with exit 3 and the request id when the key is revoked mid-stream, and on a table for people', async () => {
  const { key: k, keyId, accountId } = await stack.accounts.key('pro');
  const publisher = publishAtRate(stack.nats.js, ['SOL'], 50);
  const p = startCli(['stream', '--coin', 'SOL', '--format', 'table'], { ...env, MDP_API_KEY: k });
  await eventually(async () => /SOL\s+trade (buy|sell)/.test(p.stdout()), 30_000);
  await stack.accounts.service.revokeKey(accountId, keyId);
  const r = await p.exited;
  await publisher.stop();
  expect(r.code).toBe(3);
  expect(r.stderr).toMatch(/error: auth_expired: .*request req_[0-9a-f]{20}/);
  expect(r.stdout).not.toContain('\x1b['); // not a terminal: no colours
  const again = await runCli(['stream', '--coin', 'SOL'], { ...env, MDP_API_KEY: k });
  expect(again.code).toBe(3);
  expect(again.stderr).toMatch(/key_revoked.*HTTP 401, request req_/);
  expect(r.stdout + r.stderr + again.stderr).not.toContain(k);
});
