/**
 * Replay by time through the TypeScript client's three iterators (`stream()` over SSE,
 * `streamGrpc()` over gRPC StreamEvents, `streamDisk()` over disk-sync) and through `mdp stream` /
 * `mdp sync`, against real edges on a real nats-server holding a known publication schedule: for
 * seeded ranges (`fromTime`/`toTime` as a Date, ISO text or Unix ms, with and without a coin),
 * each iterator yields exactly the stored sequences of the range, then `replay_complete`, and ends
 * by itself (the `for await` finishes, no reconnection); a paced replay whose connections are cut
 * in the middle (a relay destroys them) reconnects with its position and the same window and
 * still yields the range exactly once before it ends; the command line prints exactly the range's
 * events and exits 0.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readSegment } from '../../clients/cli/src/sync/recover.ts';
import { listSegments } from '../../clients/cli/src/sync/segments.ts';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import { streamGrpc } from '../../clients/typescript/src/grpc.ts';
import type { ResumingStream } from '../../clients/typescript/src/resuming-stream.ts';
import { stream } from '../../clients/typescript/src/stream.ts';
import type { ReplayOptions, ReplayTime, StreamFilters } from '../../clients/typescript/src/stream-types.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { type CliResult, freshConfigDir, startCli } from '../support/cli.ts';
import { type CutProxy, startCutProxy } from '../support/cut-proxy.ts';
import { startGuardedDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { publishNow, trade } from '../support/publisher.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { storedMs } from '../support/stored-seqs.ts';
import { type CollectedStream, collectStream, reconnectsOf } from '../support/stream-collect.ts';

const COINS = ['BTC', 'ETH', 'SOL'];
const RETRY_MS = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: TestStack;
let sse: TestGateway;
let grpc: TestGrpc;
let disk: { address: string; stop(): Promise<void> };
/** Relays in front of each edge: `cut()` destroys the iterators' live connections. */
const proxies: Record<'sse' | 'grpc' | 'disk', CutProxy> = {} as never;
const configDir = freshConfigDir();

/** The schedule as stored: sequence, stored time (ms), coin. */
type Stored = { seq: number; ms: number; coin: string };
let stored: Stored[] = [];

/** Publishes `n` trades one by one, 0-9 ms apart with two pauses of 120 ms, and reads their stored times back. */
async function publishSchedule(n: number): Promise<Stored[]> {
  const from = (await stack.nats.jsm.streams.info(STREAMS.MD)).state.last_seq;
  for (let i = 0; i < n; i++) {
    await publishNow(stack.nats.js, [
      { ...trade(COINS[i % COINS.length] as string, i), timestamp_ms: Date.now() },
    ]);
    await sleep(i === Math.floor(n / 3) || i === Math.floor((2 * n) / 3) ? 120 : (i * 7) % 10);
  }
  const out: Stored[] = [];
  const { last_seq } = (await stack.nats.jsm.streams.info(STREAMS.MD)).state;
  for (let seq = from + 1; seq <= last_seq; seq++) {
    const m = await stack.nats.jsm.streams.getMessage(STREAMS.MD, { seq });
    if (!m) throw new Error(`stored message ${seq} missing`);
    out.push({ seq, ms: storedMs(m.timestamp), coin: JSON.parse(new TextDecoder().decode(m.data)).symbol });
  }
  return out;
}

type Range = { from: number; to: number; coin?: string; speed?: number };

/** The stored sequences of a range: stored time in [from, to], the coin if named. */
const expected = (r: Range) =>
  stored.filter((s) => s.ms >= r.from && s.ms <= r.to && (!r.coin || s.coin === r.coin)).map((s) => s.seq);
/** The last sequence stored at or before `to`: the `last_seq` of `replay_complete`. */
const lastAtOrBefore = (to: number) => stored.filter((s) => s.ms <= to).at(-1)?.seq ?? 0;

/** An instant in one of the spellings the client takes (Unix ms, a Date, ISO 8601 text). */
const spelled = (ms: number, how: number): ReplayTime =>
  how % 3 === 0 ? ms : how % 3 === 1 ? new Date(ms) : new Date(ms).toISOString();

type Open = (opts: StreamFilters & ReplayOptions) => Promise<ResumingStream>;

const backoff = { retryMs: RETRY_MS, random: () => 0.5, maxDelayMs: 1_000 };

const transports: { name: string; proxy: 'sse' | 'grpc' | 'disk'; open: Open }[] = [
  {
    name: 'stream() over SSE',
    proxy: 'sse',
    open: async (o) => stream({ ...o, ...backoff, url: proxies.sse.url, key: await quantKey() }),
  },
  {
    name: 'streamGrpc()',
    proxy: 'grpc',
    open: async (o) =>
      streamGrpc({ ...o, ...backoff, target: new URL(proxies.grpc.url).host, key: await quantKey() }),
  },
  {
    name: 'streamDisk()',
    proxy: 'disk',
    // disk-sync holds one connection per key: a key of its own for each iterator.
    open: async (o) =>
      streamDisk({ ...o, ...backoff, url: proxies.disk.url.replace(/^http/, 'ws'), key: await quantKey() }),
  },
];

const quantKey = async () => (await stack.accounts.key('quant')).key;

/** Runs `mdp` to its exit; past `ms` it is killed and the test fails (instead of leaving it running). */
async function runCliWithin(args: string[], env: Record<string, string>, ms = 60_000): Promise<CliResult> {
  const p = startCli(args, env);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
  const r = await p.exited.finally(() => clearTimeout(timer));
  if (r.code === null) throw new Error(`mdp ${args[0]} did not exit within ${ms} ms: ${r.stderr}`);
  return r;
}

/** Waits for the iterator to end by itself; fails (instead of hanging) when it goes on. */
async function endsByItself(c: CollectedStream, what: string): Promise<void> {
  let ended = false;
  void c.done.then(() => (ended = true));
  await eventually(() => ended, 20_000, `${what}: the iterator ends after replay_complete`);
}

/** Closes every iterator a test opened, whatever its outcome. */
const opened: ResumingStream[] = [];
async function tracked(s: Promise<ResumingStream>): Promise<ResumingStream> {
  opened.push(await s);
  return opened.at(-1) as ResumingStream;
}

beforeAll(async () => {
  stack = await startStack();
  const log = createLogger(stack.config.LOG_LEVEL, 'client-replay');
  sse = await startTestGateway(stack.server.url, { SSE_RETRY_MS: String(RETRY_MS) }, { guard: 'keys' });
  grpc = await startTestGrpc(stack.nats, stack.config);
  disk = await startGuardedDisksync(stack.nats, stack.config, log);
  proxies.sse = await startCutProxy(sse.url);
  proxies.grpc = await startCutProxy(`http://${grpc.target}`);
  proxies.disk = await startCutProxy(disk.address.replace(/^ws/, 'http'));
  stored = await publishSchedule(180);
}, 90_000);

afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

afterAll(async () => {
  for (const p of Object.values(proxies)) await p?.close();
  await disk?.stop();
  await grpc?.close();
  await sse?.close();
  await stack?.close();
  rmSync(configDir, { recursive: true, force: true });
});

describe.each(transports)('$name with fromTime/toTime', ({ name, proxy, open }) => {
  it('yields exactly the stored events of seeded ranges, then replay_complete, and ends by itself', async () => {
    const { random } = seededRandom(`${name} ranges`);
    const first = (stored[0] as Stored).ms;
    const last = (stored.at(-1) as Stored).ms;
    for (let round = 0; round < 3; round++) {
      const a = first + Math.floor(random() * (last - first));
      const b = first + Math.floor(random() * (last - first));
      const range: Range = {
        from: Math.min(a, b),
        to: Math.max(a, b),
        ...(round === 1 ? { coin: 'ETH' } : {}),
      };
      const what = `round ${round} ${JSON.stringify(range)}`;
      const accepted = proxies[proxy].accepted();
      const s = await tracked(
        open({
          fromTime: spelled(range.from, round),
          toTime: spelled(range.to, round + 1),
          ...(range.coin ? { coins: [range.coin] } : {}),
        }),
      );
      const c = collectStream(s);
      await endsByItself(c, what);
      const want = expected(range);
      expect(c.error, what).toBeNull();
      expect(c.seqs, what).toEqual(want);
      expect(reconnectsOf(c), what).toEqual([]);
      // The last item is the end of the replay: the range's last stored sequence and the count.
      expect(c.items.at(-1), what).toMatchObject({
        type: 'notice',
        notice: { code: 'replay_complete', last_seq: lastAtOrBefore(range.to), count: want.length },
      });
      expect(s.position, what).toBe(lastAtOrBefore(range.to));
      // No connection after the server's clean close (SSE's fetch may reuse the last one: at most 1).
      await sleep(RETRY_MS * 3);
      expect(proxies[proxy].accepted() - accepted, what).toBeLessThanOrEqual(1);
    }
  });

  it('resumes a paced replay cut in the middle with its position and the same window, exactly once', async () => {
    const { random } = seededRandom(`${name} cuts`);
    // Paced at the recorded speed (about a second for the range), so the cuts land inside it.
    const range: Range = { from: (stored[8] as Stored).ms, to: (stored.at(-8) as Stored).ms, speed: 1 };
    const want = expected(range);
    const s = await tracked(open({ fromTime: new Date(range.from), toTime: range.to, speed: 1 }));
    const c = collectStream(s);
    for (let cut = 0; cut < 3; cut++) {
      const stopAt = c.seqs.length + 10 + Math.floor(random() * 15);
      await eventually(() => c.seqs.length >= stopAt, 20_000, `cut ${cut}: ${stopAt} events`);
      // Cut until the iterator reports the reconnection (a cut can meet no open connection).
      const before = reconnectsOf(c).length;
      await eventually(
        async () => {
          if (reconnectsOf(c).length > before) return true;
          proxies[proxy].cut();
          await sleep(50);
          return reconnectsOf(c).length > before;
        },
        20_000,
        `cut ${cut}: the iterator reconnects`,
      );
      expect(c.items.some((i) => i.type === 'notice' && i.notice.code === 'replay_complete')).toBe(false);
    }
    await endsByItself(c, 'the cut replay');
    expect(c.error).toBeNull();
    expect(reconnectsOf(c).length).toBe(3);
    expect(c.seqs).toEqual(want);
    expect(c.items.at(-1)).toMatchObject({
      type: 'notice',
      notice: { code: 'replay_complete', last_seq: lastAtOrBefore(range.to) },
    });
    expect(s.reconnects).toBe(3);
  });
});

it('refuses at once, with invalid_params, a window the server would refuse', () => {
  const at = (stored[0] as Stored).ms;
  const refusal = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e;
    }
    return null;
  };
  const url = proxies.sse.url;
  for (const [opts, field] of [
    [{ fromTime: at, toTime: at - 1 }, 'toTime'],
    [{ fromTime: 'yesterday' }, 'fromTime'],
    [{ fromTime: '2026-11-28T12:00:00' }, 'fromTime'], // no time zone: ambiguous
    [{ toTime: new Date(Number.NaN) }, 'toTime'],
    [{ speed: 0 }, 'speed'],
  ] as const) {
    for (const make of [
      () => stream({ ...opts, url, key: 'k' }),
      () => streamGrpc({ ...opts, target: 'x:1', key: 'k' }),
      () => streamDisk({ ...opts, url, key: 'k' }),
    ])
      expect(refusal(make), JSON.stringify(opts)).toMatchObject({
        code: 'invalid_params',
        details: { field },
      });
  }
});

describe('mdp with --from-time/--to-time', () => {
  it('stream prints exactly the range, then replay_complete, and exits 0', async () => {
    const { random } = seededRandom('mdp stream range');
    const i = 5 + Math.floor(random() * 60);
    const range: Range = { from: (stored[i] as Stored).ms, to: (stored[i + 80] as Stored).ms, coin: 'SOL' };
    const env = { MDP_STREAM_URL: sse.url, MDP_API_KEY: await quantKey(), MDP_CONFIG_DIR: configDir };
    const r = await runCliWithin(
      [
        'stream',
        '--coin',
        'SOL',
        '--from-time',
        new Date(range.from).toISOString(),
        '--to-time',
        String(range.to),
        '--speed',
        'max',
        '--format',
        'json',
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { seq: number; symbol: string });
    expect(events.map((e) => e.seq)).toEqual(expected(range));
    expect(events.every((e) => e.symbol === 'SOL')).toBe(true);
    expect(r.stderr).toContain('notice replay_complete');
    expect(r.stderr).toContain(`last sequence ${lastAtOrBefore(range.to)}`);
    expect(r.stderr).not.toContain('reconnecting');
  }, 120_000);

  it('sync over disk-sync copies exactly the range into DIR and exits 0; a bad --to-time is exit 2', async () => {
    const range: Range = { from: (stored[30] as Stored).ms, to: (stored[150] as Stored).ms };
    const out = join(configDir, 'range');
    const env = {
      MDP_DISK_URL: disk.address,
      MDP_API_KEY: await quantKey(),
      MDP_CONFIG_DIR: configDir,
    };
    const r = await runCliWithin(
      [
        'sync',
        '--out',
        out,
        '--from-time',
        String(range.from),
        '--to-time',
        new Date(range.to).toISOString(),
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(listSegments(out).flatMap((s) => readSegment(s).seqs)).toEqual(expected(range));
    expect(r.stderr).toContain('notice replay_complete');
    const bad = await runCliWithin(['sync', '--out', out, '--to-time', 'yesterday'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--to-time');
  }, 120_000);
});
