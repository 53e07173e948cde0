/**
 * Issue 32: two regions on one machine, as `npm run cluster -- --regions us,jp` runs them
 * (platform/nats-regions.ts): a home nats-server (JetStream domain `us`) and a JP one (domain
 * `jp`) joined as a leaf node through a proxy that delays the link 80 ms each way and can cut it.
 * One real `gateway edges` process per region (SSE, JSON-RPC, gRPC, disk-sync); JP's on JP's NATS
 * with NATS_HOME_DOMAIN=us, reading its mirrors (app/region-copies.ts). Events are published at
 * home at RATE/s throughout; keys are made at home.
 * 1. A client moving between regions resumes with the position it has: SSE `Last-Event-ID`, gRPC
 *    `after_seq`, disk-sync `from_seq`, US → JP → US → … a few events per stop: every sequence
 *    exactly once, in order. A US position is usually ahead of JP's copy (the link's delay): the
 *    JP edge resumes after it all the same.
 * 2. A key made at home is accepted in JP before JP's copy of the keys has it (read from home);
 *    JSON-RPC: a filter made on JP with `last_event_id` = the last event polled from a US filter
 *    goes on exactly; `eth_blockNumber` answers each region's own height; JP's lag is said by its
 *    /healthz, JSON-RPC headers and gRPC GetBlockNumber, and seen from home (the status's view).
 *    A key used only in JP has its last use in JP's own bucket; the console's view finds it.
 * 3. A position JP's copy does not hold yet while the link is cut: a non-terminal `region_lag`
 *    notice (never `position_beyond_end`), then, once the link is back, exactly the events after it.
 * 4. The link cut: a JP client stays connected, then receives every sequence exactly once; past
 *    REGION_CONFIRM_MS (4 s here) JP refuses new requests with `region_unconfirmed` (it cannot
 *    confirm keys), and admits again once the link is back.
 * 5. A key revoked at home: its open JP stream ends with `key_revoked` and a new request is 401.
 * 6. The TypeScript client given both regions' edges (US first) on SSE, gRPC and disk-sync: the US
 *    edges killed, each iterator goes on from JP with its position, every sequence exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import { streamGrpc } from '../../clients/typescript/src/grpc.ts';
import { stream } from '../../clients/typescript/src/index.ts';
import type { ResumingStream } from '../../clients/typescript/src/resuming-stream.ts';
import { lastUsedEverywhere } from '../../gateways/http/key-last-used.ts';
import { watchRegionCopies } from '../../gateways/http/status/region-copies.ts';
import type { Nats } from '../../platform/nats.ts';
import type { NatsRegions } from '../../platform/nats-regions.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { resumingReader } from '../support/cluster.ts';
import { eventually } from '../support/eventually.ts';
import { keyMetadata, priceClient } from '../support/grpc.ts';
import { stopProcess } from '../support/process.ts';
import { publishAtRate, type RatePublisher } from '../support/publisher.ts';
import { startTwoRegions, type TwoRegions } from '../support/regions.ts';
import { diskSeqStream, exactlyOnce, grpcSeqStream } from '../support/resuming-transports.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

const RATE = 200;
/** JP admits new requests this long after its copy last heard from home (REGION_CONFIRM_MS). */
const CONFIRM_MS = 4_000;
let two: TwoRegions;
let regions: NatsRegions;
let home: Nats;
let jpNats: Nats;
let accounts: TestAccounts;
let publisher: RatePublisher;
let edges: TwoRegions['edges'];
const keysInJp = () => two.keysInJp();

beforeAll(async () => {
  two = await startTwoRegions({ homeSize: 1, jpEnv: { REGION_CONFIRM_MS: String(CONFIRM_MS) } });
  ({ regions, home, accounts, edges } = two);
  jpNats = two.jp;
  publisher = publishAtRate(home.js, ['BTC', 'ETH'], RATE);
}, 240_000);

afterAll(async () => {
  await publisher?.stop();
  await two?.stop();
});

type Open = (
  target: string,
  key: string,
  after: number,
  push: (seq: number) => void,
) => { abort(): void; ended: Promise<unknown> };

/** The notice codes the SSE clients of `travel` were sent. */
const sseNotices: string[] = [];

const sseSeqStream: Open = (url, key, after, push) => {
  let abort = () => {};
  const ended = openSse(
    url,
    (m) => {
      if (m.event === 'message' && m.id !== null) push(Number(m.id));
      if (m.event === 'notice') sseNotices.push(JSON.parse(m.data).code);
    },
    { 'x-api-key': key, 'last-event-id': String(after) },
  ).then((sse) => {
    abort = sse.abort;
    return sse.done;
  });
  return { abort: () => abort(), ended };
};

/**
 * Reads `perStop` events at each stop, alternating between the regions' `targets`, each stop
 * resuming after the last sequence kept; a key of its own per stop (disk-sync holds one
 * connection per key).
 */
async function travel(open: Open, targets: string[], keys: string[], perStop: number): Promise<number[]> {
  const seqs: number[] = [];
  const { last_seq: from } = (await home.jsm.streams.info('MD')).state;
  for (const [s, key] of keys.entries()) {
    const target = targets[s % targets.length] as string;
    const got: number[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`stop ${s} (${target}): ${got.length} of ${perStop} events in 20 s`)),
        20_000,
      );
      const c = open(target, key, seqs.at(-1) ?? from, (seq) => {
        got.push(seq);
        if (got.length === perStop) {
          clearTimeout(timer);
          c.abort();
          resolve();
        }
      });
      c.ended.then(() => {
        if (got.length >= perStop) return;
        clearTimeout(timer);
        reject(new Error(`stop ${s} (${target}): ended after ${got.length} events`));
      });
    });
    seqs.push(...got.slice(0, perStop));
  }
  expect(exactlyOnce(seqs, from, seqs.at(-1) as number)).toBe('ok');
  return seqs;
}

it('SSE, gRPC and disk-sync clients move US → JP → US … and resume exactly with their last position', {
  timeout: 120_000,
}, async () => {
  const keys = await two.jpKeys(6);
  // A slower link (500 ms each way): JP's copy is ~100 events behind, so a position brought from
  // US is one JP has not received yet, and the JP edge must resume after it all the same.
  regions.link.delayMs = 500;
  try {
    await travel(sseSeqStream, [edges.us.sse, edges.jp.sse], keys, 40);
    // The JP stops were behind the position they were given, and said so.
    expect(sseNotices).toContain('region_lag');
    expect(sseNotices).not.toContain('position_beyond_end');
    await travel(grpcSeqStream, [edges.us.grpc, edges.jp.grpc], keys, 40);
    await travel(
      (url, key, after, push) => diskSeqStream(url, key, after, 'json', push),
      [edges.us.disk, edges.jp.disk],
      keys,
      40,
    );
  } finally {
    regions.link.delayMs = 80;
  }
});

async function rpc(url: string, key: string, method: string, params: unknown[] = []): Promise<unknown> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

it('JSON-RPC: a key made at home works in JP at once; a filter moved from US to JP with last_event_id goes on exactly; each region answers its own height', {
  timeout: 60_000,
}, async () => {
  // A key made at home works in JP at once: JP's copy does not have it yet (the link at 500 ms
  // each way), so JP asks the home region.
  regions.link.delayMs = 500;
  let key: string;
  try {
    ({ key } = await accounts.key('quant', { jp: true }));
    const behind = (await jpNats.jsm.streams.info('KV_keys')).state.last_seq;
    expect(behind).toBeLessThan((await home.jsm.streams.info('KV_keys')).state.last_seq);
    expect(await rpc(edges.jp.rpc, key, 'eth_chainId')).toMatch(/^0x/);
  } finally {
    regions.link.delayMs = 80;
  }
  const seqs: number[] = [];
  const poll = async (url: string, id: unknown) => {
    const events = (await rpc(url, key, 'md_getFilterChanges', [id])) as { seq: number }[];
    seqs.push(...events.map((e) => e.seq));
  };
  const from = Number.parseInt((await rpc(edges.us.rpc, key, 'eth_blockNumber')) as string, 16);
  const usFilter = await rpc(edges.us.rpc, key, 'md_newFilter', [{ last_event_id: from }]);
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 300));
    await poll(edges.us.rpc, usFilter);
  }
  const jpFilter = await rpc(edges.jp.rpc, key, 'md_newFilter', [{ last_event_id: seqs.at(-1) ?? from }]);
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 300));
    await poll(edges.jp.rpc, jpFilter);
  }
  expect(seqs.length).toBeGreaterThan(100);
  expect(exactlyOnce(seqs, from, seqs.at(-1) as number)).toBe('ok');
  // Each region's own height: JP's is its copy's newest sequence, which the home region holds too.
  const [us, jp] = await Promise.all([
    rpc(edges.us.rpc, key, 'eth_blockNumber'),
    rpc(edges.jp.rpc, key, 'eth_blockNumber'),
  ]);
  const jpHeight = Number.parseInt(jp as string, 16);
  // How far JP's copy is behind, said by JP only: /healthz, JSON-RPC headers, gRPC GetBlockNumber.
  const health = async (url: string) => (await fetch(new URL('/healthz', url))).json();
  expect(await health(edges.us.rpc)).toEqual({ status: 'ok' });
  const jpHealth = (await health(edges.jp.rpc)) as { status: string; region: Record<string, unknown> };
  expect(jpHealth.status).toBe('ok');
  expect(jpHealth.region).toMatchObject({ home: 'us', lag: expect.any(Number) });
  expect(Number(jpHealth.region.last_contact_ms)).toBeLessThan(CONFIRM_MS);
  const answer = await fetch(edges.jp.rpc, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
  });
  expect(answer.headers.get('x-region-home')).toBe('us');
  expect(Number(answer.headers.get('x-region-lag'))).toBeGreaterThanOrEqual(0);
  const block = await new Promise<Record<string, unknown>>((resolve, reject) =>
    priceClient(edges.jp.grpc).GetBlockNumber(
      {},
      keyMetadata(key),
      (err: Error | null, r: Record<string, unknown>) => (err ? reject(err) : resolve(r)),
    ),
  );
  expect(block).toMatchObject({ region_home: 'us' });
  // The home region's status view of JP's copy (what /api/v1/status shows with NATS_REGION_DOMAINS=jp).
  const copies = watchRegionCopies(home, ['jp']);
  try {
    await eventually(() => copies.list()[0]?.reachable === true, 10_000, "JP's copy seen from home");
    expect(copies.list()[0]).toMatchObject({ region: 'jp', lag: expect.any(Number) });
    expect(Number(copies.list()[0]?.last_seq)).toBeGreaterThan(0);
  } finally {
    copies.stop();
  }
  expect(Number(block.number)).toBeGreaterThan(0);
  // Neither region's height is past what home has stored. (Not against the US edge's own height:
  // each is what that process's tail has received, and a loaded US edge was once 433 events, about
  // 2 s, behind JP's in a fresh-clone run.)
  const homeLast = (await home.jsm.streams.info('MD')).state.last_seq;
  expect(jpHeight).toBeLessThanOrEqual(homeLast);
  expect(Number.parseInt(us as string, 16)).toBeLessThanOrEqual(homeLast);
  expect((await home.jsm.streams.getMessage('MD', { seq: jpHeight }))?.seq).toBe(jpHeight);
});

it('a key used only in JP shows its last use at home (the console reads every region’s usage)', {
  timeout: 30_000,
}, async () => {
  const { key, keyId } = await accounts.key('quant', { jp: true });
  await keysInJp();
  const before = Date.now();
  expect(await rpc(edges.jp.rpc, key, 'eth_chainId')).toMatch(/^0x/);
  const homeOnly = await lastUsedEverywhere(home, []);
  const everywhere = await lastUsedEverywhere(home, ['jp']);
  // JP's edge wrote the use to JP's own bucket: home's has none, the console's view finds it.
  await eventually(
    async () => ((await everywhere.get(keyId)) ?? 0) >= before,
    10_000,
    'the JP use seen from home',
  );
  expect(await homeOnly.get(keyId)).toBeNull();
});

it('a position JP has not received (link cut) gets region_lag, then exactly the events after it; a JP client rides out the cut', {
  timeout: 90_000,
}, async () => {
  const { key } = await accounts.key('quant', { jp: true });
  // Made before the cut, and in JP's copy of the keys by then (JP confirms keys from its copy while cut).
  const { key: mover } = await accounts.key('quant', { jp: true });
  await keysInJp();
  const { last_seq: start } = (await jpNats.jsm.streams.info('MD')).state;
  const riding = resumingReader([edges.jp.sse], key, start);
  regions.link.cut();
  try {
    // Events stored at home only: JP's copy stops where the cut found it.
    await new Promise((r) => setTimeout(r, 2_000));
    const homeLast = (await home.jsm.streams.info('MD')).state.last_seq;
    const jpLast = (await jpNats.jsm.streams.info('MD')).state.last_seq;
    expect(homeLast).toBeGreaterThan(jpLast);
    const messages: SseMessage[] = [];
    const sse = await openSse(edges.jp.sse, (m) => messages.push(m), {
      'x-api-key': mover,
      'last-event-id': String(homeLast),
    });
    expect(sse.status).toBe(200);
    await eventually(() => messages.some((m) => m.event === 'notice'), 10_000, 'a notice');
    const notice = JSON.parse(messages.find((m) => m.event === 'notice')?.data ?? '{}');
    expect(notice).toMatchObject({
      code: 'region_lag',
      requested_last_event_id: homeLast,
      resumed_after: homeLast,
      last_seq: jpLast,
    });
    // Past CONFIRM_MS without word from home, JP refuses new requests (it cannot confirm keys)
    // and keeps the streams it has open.
    await eventually(
      async () => {
        const r = await fetch(edges.jp.rpc, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': key },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        });
        const body = (await r.json()) as { error?: { data?: { error?: string } } };
        return body.error?.data?.error === 'region_unconfirmed';
      },
      CONFIRM_MS + 10_000,
      'region_unconfirmed once the link has been down past REGION_CONFIRM_MS',
    );
    const refused = await fetch(edges.jp.sse, { headers: { 'x-api-key': key } });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: string }).error).toBe('region_unconfirmed');
    regions.link.restore();
    await eventually(
      () => messages.filter((m) => m.event === 'message').length >= 100,
      30_000,
      'events after the link is back',
    );
    sse.abort();
    const seqs = messages.filter((m) => m.event === 'message').map((m) => Number(m.id));
    expect(exactlyOnce(seqs, homeLast, seqs.at(-1) as number)).toBe('ok');
  } finally {
    regions.link.restore();
  }
  // The link back: JP admits again.
  await eventually(
    async () =>
      (
        await fetch(edges.jp.sse, {
          headers: { 'x-api-key': key },
          signal: AbortSignal.timeout(1_000),
        }).catch(() => null)
      )?.status === 200,
    20_000,
    'JP admitting again',
  );
  const end = (await home.jsm.streams.info('MD')).state.last_seq;
  await eventually(() => (riding.seqs.at(-1) ?? 0) >= end, 30_000, `the JP client at ${end}`);
  riding.stop();
  expect(riding.reconnects).toBe(0);
  expect(
    exactlyOnce(
      riding.seqs.filter((s) => s <= end),
      start,
      end,
    ),
  ).toBe('ok');
});

it('a key revoked at home stops working in JP at once: its JP stream ends (auth_expired, SSE’s code for key_revoked)', {
  timeout: 60_000,
}, async () => {
  const { key, keyId, accountId } = await accounts.key('quant', { jp: true });
  await keysInJp();
  const messages: SseMessage[] = [];
  const sse = await openSse(edges.jp.sse, (m) => messages.push(m), { 'x-api-key': key });
  expect(sse.status).toBe(200);
  await eventually(() => messages.some((m) => m.event === 'message'), 10_000, 'events on JP');
  const revokedAt = Date.now();
  await accounts.service.revokeKey(accountId, keyId);
  await eventually(() => messages.some((m) => m.event === 'error'), 10_000, 'the stream ended');
  const tookMs = Date.now() - revokedAt;
  const error = JSON.parse(messages.find((m) => m.event === 'error')?.data ?? '{}');
  // SSE's code for a revoked key (the error catalogue's row for key_revoked).
  expect(error).toMatchObject({ code: 'auth_expired' });
  // The revocation crosses the link once (80 ms); the stated bound is 1 s plus the link's delay.
  expect(tookMs, `revoked in JP after ${tookMs} ms`).toBeLessThan(1_000 + 80 + 2_000);
  sse.abort();
  const again = await fetch(edges.jp.sse, { headers: { 'x-api-key': key } });
  expect(again.status).toBe(401);
});

it('the TypeScript client given [US, JP] fails over to JP with its position when the US edges die: SSE, gRPC, disk-sync', {
  timeout: 90_000,
}, async () => {
  const keys = await two.jpKeys(3);
  const iterators: ResumingStream[] = [
    stream({ url: [edges.us.sse, edges.jp.sse], key: keys[0] as string }),
    streamGrpc({ target: [edges.us.grpc, edges.jp.grpc], key: keys[1] as string }),
    streamDisk({ url: [edges.us.disk, edges.jp.disk], key: keys[2] as string }),
  ];
  const seqs: number[][] = iterators.map(() => []);
  const reading = iterators.map(async (it, i) => {
    for await (const item of it) if (item.type === 'event') seqs[i]?.push(item.seq);
  });
  await eventually(() => seqs.every((s) => s.length >= 40), 20_000, 'every client reading from US');
  expect(iterators.map((it) => it.endpoint)).toEqual([edges.us.sse, edges.us.grpc, edges.us.disk]);
  await stopProcess(edges.us.process, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 1_000));
  const end = (await home.jsm.streams.info('MD')).state.last_seq;
  await eventually(() => seqs.every((s) => (s.at(-1) ?? 0) >= end), 30_000, `every client past ${end} on JP`);
  for (const it of iterators) it.close();
  await Promise.all(reading);
  expect(iterators.map((it) => it.endpoint)).toEqual([edges.jp.sse, edges.jp.grpc, edges.jp.disk]);
  for (const s of seqs) {
    const first = s[0] as number;
    expect(
      exactlyOnce(
        s.filter((x) => x <= end),
        first - 1,
        end,
      ),
    ).toBe('ok');
  }
});
