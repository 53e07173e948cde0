/**
 * `streamGrpc()` (`@mdp/client/grpc`) against a real `gateway grpc` process on a real nats-server:
 * its connections are cut through a relay and the edge is killed and restarted on the same port
 * while events are published; it yields every stream sequence exactly once, in order, reconnecting
 * with `after_seq` and the SSE client's backoff; notices and warnings come as the same typed values
 * as over SSE; a revoked or unknown key ends it with the typed error from the edge's trailers.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import { MdpError } from '../../clients/typescript/src/errors.ts';
import { streamGrpc } from '../../clients/typescript/src/grpc.ts';
import { freePort } from '../../platform/free-port.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { type CutProxy, startCutProxy } from '../support/cut-proxy.ts';
import { startInProcessDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startService, stopProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';
import { collectStream, oneTo, reconnectsOf } from '../support/stream-collect.ts';

const RETRY_MS = 100;
const MAX_DELAY_MS = 2_000;
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let proxy: CutProxy;
let port: number;
const edges: ServiceProcess[] = [];

/** A `gateway grpc` process on `port` (the same port every time, so a restart is the same target). */
async function startEdge(): Promise<ServiceProcess> {
  const p = startService(['gateway', 'grpc', '--region', 'us'], {
    NATS_URL: server.url,
    NODE_ENV: 'test',
    API_KEY_SECRET: config.API_KEY_SECRET,
    GRPC_PORT_US: String(port),
    GRPC_PORT_JP: '0',
  });
  edges.push(p);
  await p.waitForLog((l) => l.msg === 'grpc listening', 90_000);
  return p;
}

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
  port = await freePort();
  await startEdge();
  proxy = await startCutProxy(`http://127.0.0.1:${port}`);
}, 120_000);

afterAll(async () => {
  await killAll(edges);
  await proxy?.close();
  await base?.close();
});

const target = () => new URL(proxy.url).host;

it('yields every sequence exactly once, in order, across cut connections and a killed edge', async () => {
  const { key } = await accounts.key('quant');
  const s = streamGrpc({
    target: target(),
    key,
    from: 0,
    retryMs: RETRY_MS,
    maxDelayMs: MAX_DELAY_MS,
    random: () => 0.5,
  });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH', 'SOL'], 300, { booksEvery: 4 });
  try {
    for (let cut = 0; cut < 5; cut++) {
      const seen = c.seqs.length;
      await eventually(() => c.seqs.length >= seen + 40 + cut * 7, 30_000, `events before cut ${cut}`);
      expect(proxy.cut()).toBeGreaterThan(0);
    }
    // The edge dies: every attempt fails until it is back on the same port, so the waits double.
    const seen = c.seqs.length;
    const edge = edges[edges.length - 1] as ServiceProcess;
    await stopProcess(edge);
    await eventually(() => reconnectsOf(c).some((r) => r.attempt >= 3), 30_000, 'three failed attempts');
    await startEdge();
    await eventually(() => c.seqs.length >= seen + 200, 60_000, 'events after the restart');
  } finally {
    await publisher.stop();
  }
  const last = await lastSeq(nats);
  await eventually(() => c.seqs.at(-1) === last, 60_000, `the last sequence ${last}`);
  s.close();
  await c.done;

  expect(c.error).toBeNull();
  expect(last).toBeGreaterThan(400);
  expect(c.seqs).toEqual(oneTo(last));
  expect(s.position).toBe(last);
  const waits = reconnectsOf(c);
  // At least one per cut and the attempts refused while the edge was down.
  expect(waits.length).toBeGreaterThanOrEqual(7);
  expect(Math.max(...waits.map((w) => w.attempt))).toBeGreaterThanOrEqual(3);
  expect(s.reconnects).toBe(waits.length);
  for (const w of waits) {
    expect(w.error).toBeInstanceOf(MdpError);
    // The SSE client's rule from 100 ms: 100 · 2^(n−1), jitter ×1.25 at random() = 0.5, capped.
    if (w.error.retryAfterSeconds === null)
      expect(w.delayMs).toBe(Math.round(Math.min(MAX_DELAY_MS, RETRY_MS * 2 ** (w.attempt - 1) * 1.25)));
  }
}, 240_000);

it('says a position beyond the end as a notice and an unknown coin as a warning, then streams after it', async () => {
  const { key } = await accounts.key('quant');
  const last = await lastSeq(nats);
  const s = streamGrpc({ target: target(), key, coins: ['BTC', 'NOPE'], from: last + 1_000 });
  const c = collectStream(s);
  await eventually(() => c.items.some((i) => i.type === 'notice'), 30_000, 'the notice');
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 50);
  try {
    await eventually(() => c.seqs.length >= 3, 30_000, 'three BTC events');
  } finally {
    await publisher.stop();
  }
  s.close();
  await c.done;

  expect(c.error).toBeNull();
  expect(c.items.find((i) => i.type === 'notice')).toMatchObject({
    notice: { code: 'position_beyond_end', requested_last_event_id: last + 1_000, resumed_after: last },
  });
  expect(c.items.find((i) => i.type === 'warning')).toMatchObject({
    warning: {
      code: 'coin_not_found',
      coin: 'NOPE',
      terminal: false,
      request_id: expect.stringMatching(/^req_/),
    },
  });
  // The position follows the notice (resumed_after), so the first event is the next sequence.
  expect(c.seqs[0]).toBe(last + 1);
  for (const i of c.items)
    if (i.type === 'event') {
      expect(i.event).toMatchObject({ seq: i.seq, symbol: 'BTC', source: expect.any(String) });
      expect(['trade', 'book']).toContain(i.event.event_type);
    }
}, 120_000);

it('ends with the typed error when the key is revoked mid-stream or unknown, without retrying', async () => {
  const { key, keyId, accountId } = await accounts.key('quant');
  const s = streamGrpc({ target: target(), key, from: await lastSeq(nats) });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['ETH'], 50);
  try {
    await eventually(() => c.seqs.length >= 2, 30_000, 'two events');
    await accounts.service.revokeKey(accountId, keyId);
    await c.done;
  } finally {
    await publisher.stop();
  }
  expect(c.error).toBeInstanceOf(MdpError);
  expect(c.error).toMatchObject({
    code: 'key_revoked',
    requestId: expect.stringMatching(/^req_/),
    details: { grpc_status: 16 },
  });
  expect(reconnectsOf(c)).toEqual([]);

  const again = collectStream(streamGrpc({ target: target(), key }));
  const unknown = collectStream(streamGrpc({ target: target(), key: 'mdp_live_not_a_key' }));
  await Promise.all([again.done, unknown.done]);
  expect(again.error).toMatchObject({ code: 'key_revoked', details: { grpc_status: 16 } });
  expect(unknown.error).toMatchObject({ code: 'invalid_key', details: { grpc_status: 16 } });
  expect([...again.items, ...unknown.items]).toEqual([]);
}, 120_000);

it('yields the same events as the disk-sync iterator from the same position: one Position, one event shape', async () => {
  const { key } = await accounts.key('quant');
  const disk = await startInProcessDisksync(server.url);
  try {
    const from = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200, { booksEvery: 3 });
    let last: number;
    try {
      await eventually(async () => (await lastSeq(nats)) >= from + 60, 30_000, '60 events published');
    } finally {
      await publisher.stop();
      last = await lastSeq(nats);
    }
    const read = async (s: ReturnType<typeof streamGrpc>) => {
      const c = collectStream(s);
      await eventually(() => c.seqs.at(-1) === last, 30_000, `the last sequence ${last}`);
      s.close();
      await c.done;
      expect(c.error).toBeNull();
      return c.items.filter((i) => i.type === 'event');
    };
    const overGrpc = await read(streamGrpc({ target: target(), key, from }));
    const overDisk = await read(streamDisk({ url: disk.url, key: 'unused: open guard', from }));
    expect(overGrpc.map((i) => i.seq)).toEqual(oneTo(last).slice(from));
    expect(overGrpc).toEqual(overDisk);
  } finally {
    await disk.close();
  }
}, 120_000);
