/**
 * `streamDisk()` (`@mdp/client/disk`) against a real `gateway disksync` process on a real
 * nats-server: its connections are cut through a relay, the edge is killed (its lease left
 * behind) and stopped (1001) and restarted on the same port while events are published; in json
 * and msgpack it yields every stream sequence exactly once, in order, resubscribing with
 * `from_seq`; notices and warnings come as the same typed values as over SSE; a revoked, unknown,
 * under-tier or already-connected key ends it with the typed error of the close.
 */
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { streamDisk } from '../../clients/typescript/src/disk.ts';
import { type OpenSocket, openSocket } from '../../clients/typescript/src/disk-socket.ts';
import { MdpError } from '../../clients/typescript/src/errors.ts';
import { freePort } from '../../platform/free-port.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { type CutProxy, startCutProxy } from '../support/cut-proxy.ts';
import { connectSync, type SyncClient, startDisksyncEdge } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, stopProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';
import { type CollectedStream, collectStream, oneTo, reconnectsOf } from '../support/stream-collect.ts';

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

/**
 * A `gateway disksync` process on `port`. Short heartbeats and lease TTL, so that the lease a
 * killed edge leaves behind expires within seconds (the iterator retries 4008 until then).
 */
async function startEdge(): Promise<ServiceProcess> {
  const edge = startDisksyncEdge(
    server.url,
    config.API_KEY_SECRET,
    'us',
    {
      DISKSYNC_PORT_US: String(port),
      DISKSYNC_PING_INTERVAL_MS: '1000',
      DISKSYNC_LEASE_TTL_MS: '4000',
    },
    edges,
  );
  await edge.url;
  return edge.process;
}

const currentEdge = () => edges[edges.length - 1] as ServiceProcess;

const edgeUrlOf = async (p: ServiceProcess) =>
  (await p.waitForLog((l) => l.msg === 'disksync listening')).url as string;

/** A raw client subscribed with `key` (it holds the key's lease), or null when it was refused. */
async function holdKey(edgeUrl: string, key: string): Promise<SyncClient | null> {
  const client = connectSync(edgeUrl, { key });
  client.send({ op: 'subscribe', id: 'holder' });
  const subscribed = await Promise.race([
    client.control('subscribed', () => true, 30_000).then(() => true),
    client.closed.then(() => false),
  ]);
  if (subscribed) return client;
  await client.close();
  return null;
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

const url = () => proxy.url.replace(/^http/, 'ws');

/** Cuts the relay `cuts` times, each after a few more events. */
async function cutRepeatedly(c: CollectedStream, cuts: number): Promise<void> {
  for (let cut = 0; cut < cuts; cut++) {
    const seen = c.seqs.length;
    await eventually(() => c.seqs.length >= seen + 40 + cut * 7, 30_000, `events before cut ${cut}`);
    // Cut until the client says it reconnects: a cut that meets no connection (the iterator between
    // connections) or one the server is closing already (a 1013 on a loaded machine, one reconnect
    // for both) is made again, so every cut counted below is a reconnect of its own.
    const before = reconnectsOf(c).length;
    await eventually(
      () => {
        if (reconnectsOf(c).length > before) return true;
        proxy.cut();
        return false;
      },
      30_000,
      `a reconnect after cut ${cut}`,
    );
  }
}

/** Stops the publisher, waits for the iterator to reach the stream's end, and closes it. */
async function drain(
  c: CollectedStream,
  s: { close(): void },
  stop: () => Promise<unknown>,
): Promise<number> {
  await stop();
  const last = await lastSeq(nats);
  await eventually(() => c.seqs.at(-1) === last, 60_000, `the last sequence ${last}`);
  s.close();
  await c.done;
  return last;
}

it('json: every sequence exactly once, in order, across cuts, a killed edge and a stopped one', async () => {
  const { key } = await accounts.key('quant');
  const s = streamDisk({
    url: url(),
    key,
    from: 0,
    retryMs: RETRY_MS,
    maxDelayMs: MAX_DELAY_MS,
    random: () => 0.5,
  });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH', 'SOL'], 300, { booksEvery: 4 });
  let last: number;
  try {
    await cutRepeatedly(c, 4);
    // kill -9: every attempt fails until the edge is back; then its dead lease may refuse (4008)
    // until it expires, and the iterator waits that out as its own.
    let seen = c.seqs.length;
    const killed = currentEdge();
    await stopProcess(killed);
    await eventually(() => reconnectsOf(c).some((r) => r.attempt >= 3), 30_000, 'three failed attempts');
    await startEdge();
    await eventually(() => c.seqs.length >= seen + 200, 60_000, 'events after the restart');
    // SIGTERM: the edge closes with 1001; the iterator resumes on the next one.
    seen = c.seqs.length;
    const stopped = currentEdge();
    await stopProcess(stopped, 'SIGTERM');
    await startEdge();
    await eventually(() => c.seqs.length >= seen + 200, 60_000, 'events after the second restart');
  } finally {
    last = await drain(c, s, () => publisher.stop());
  }

  expect(c.error).toBeNull();
  expect(last).toBeGreaterThan(400);
  expect(c.seqs).toEqual(oneTo(last));
  expect(s.position).toBe(last);
  const waits = reconnectsOf(c);
  // At least one per cut, the attempts refused while the edge was down, and the 1001.
  expect(waits.length).toBeGreaterThanOrEqual(7);
  expect(s.reconnects).toBe(waits.length);
  expect(waits.some((w) => w.error.code === 'reconnect' && w.error.details?.close_code === 1001)).toBe(true);
  for (const w of waits) {
    expect(w.error).toBeInstanceOf(MdpError);
    // The SSE client's rule from 100 ms: 100 · 2^(n−1), jitter ×1.25 at random() = 0.5, capped.
    expect(w.delayMs).toBe(Math.round(Math.min(MAX_DELAY_MS, RETRY_MS * 2 ** (w.attempt - 1) * 1.25)));
  }
}, 240_000);

it('msgpack: every sequence exactly once, in order, across cuts', async () => {
  const { key } = await accounts.key('quant');
  const from = await lastSeq(nats);
  const s = streamDisk({ url: url(), key, from, encoding: 'msgpack', retryMs: RETRY_MS });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH', 'SOL'], 300, { booksEvery: 4 });
  let last: number;
  try {
    await cutRepeatedly(c, 4);
  } finally {
    last = await drain(c, s, () => publisher.stop());
  }
  expect(c.error).toBeNull();
  expect(c.seqs).toEqual(oneTo(last).slice(from));
  expect(reconnectsOf(c).length).toBeGreaterThanOrEqual(4);
  const book = c.items.find((i) => i.type === 'event' && i.event.event_type === 'book');
  expect(book).toMatchObject({ event: { bids: expect.any(Array), asks: expect.any(Array) } });
}, 120_000);

it('takes a 4008 after its own drop for its lease: retries until the key is free, then goes on', async () => {
  const { key } = await accounts.key('quant');
  // Connection attempts wait at a gate the test opens, so the key is held by another client first.
  let gate: Promise<void> = Promise.resolve();
  const gated: OpenSocket = (u, k, on) => gate.then(() => openSocket(u, k, on));
  const from = await lastSeq(nats);
  const s = streamDisk({
    url: url(),
    key,
    from,
    retryMs: RETRY_MS,
    maxDelayMs: MAX_DELAY_MS,
    openSocket: gated,
  });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['BTC', 'ETH'], 200);
  let holder: SyncClient | null = null;
  let last: number;
  try {
    await eventually(() => c.seqs.length >= 20, 30_000, 'events');
    let open = () => {};
    gate = new Promise((resolve) => (open = resolve));
    expect(proxy.cut()).toBeGreaterThan(0);
    const edgeUrl = await edgeUrlOf(currentEdge());
    // Once the edge has freed the dropped connection's lease, another client takes the key.
    holder = await eventually(() => holdKey(edgeUrl, key), 30_000, 'another client holding the key');
    open();
    await eventually(
      () => reconnectsOf(c).some((r) => r.error.code === 'duplicate_connection'),
      30_000,
      'a 4008 retried',
    );
    await holder.close();
  } finally {
    last = await drain(c, s, () => publisher.stop());
  }
  expect(c.error).toBeNull();
  expect(c.seqs).toEqual(oneTo(last).slice(from));
  expect(reconnectsOf(c).find((r) => r.error.code === 'duplicate_connection')?.error).toMatchObject({
    details: { close_code: 4008 },
    requestId: expect.stringMatching(/^req_/),
  });
}, 120_000);

it('says a position beyond the end as a notice and an unknown coin as a warning, then streams after it', async () => {
  const { key } = await accounts.key('quant');
  const last = await lastSeq(nats);
  const s = streamDisk({ url: url(), key, coins: ['BTC', 'NOPE'], from: last + 1_000 });
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
    warning: { code: 'coin_not_found', coin: 'NOPE', terminal: false },
  });
  expect(c.seqs[0]).toBe(last + 1);
  for (const i of c.items)
    if (i.type === 'event') expect(i.event).toMatchObject({ seq: i.seq, symbol: 'BTC' });
}, 120_000);

it('ends with the typed error of the close: revoked, unknown, under-tier, already connected', async () => {
  const { key, keyId, accountId } = await accounts.key('quant');
  const s = streamDisk({ url: url(), key, from: await lastSeq(nats) });
  const c = collectStream(s);
  const publisher = publishAtRate(nats.js, ['ETH'], 50);
  try {
    await eventually(() => c.seqs.length >= 2, 30_000, 'two events');
    // Another iterator on the same key, never connected before: 4008 ends it at once.
    const duplicate = collectStream(streamDisk({ url: url(), key }));
    await duplicate.done;
    expect(duplicate.error).toMatchObject({ code: 'duplicate_connection', details: { close_code: 4008 } });
    await accounts.service.revokeKey(accountId, keyId);
    await c.done;
  } finally {
    await publisher.stop();
  }
  expect(c.error).toBeInstanceOf(MdpError);
  expect(c.error).toMatchObject({
    code: 'key_revoked',
    requestId: expect.stringMatching(/^req_/),
    details: { close_code: 4002 },
  });
  expect(reconnectsOf(c)).toEqual([]);

  const again = collectStream(streamDisk({ url: url(), key }));
  const unknown = collectStream(streamDisk({ url: url(), key: 'mdp_live_not_a_key' }));
  const basic = collectStream(streamDisk({ url: url(), key: (await accounts.key('basic')).key }));
  await Promise.all([again.done, unknown.done, basic.done]);
  expect(again.error).toMatchObject({ code: 'key_revoked', details: { close_code: 4002 } });
  expect(unknown.error).toMatchObject({ code: 'invalid_key', details: { close_code: 4001 } });
  expect(basic.error).toMatchObject({ code: 'tier_restricted', details: { close_code: 4003 } });
  expect([...again.items, ...unknown.items, ...basic.items]).toEqual([]);
}, 120_000);

it('bundles for the browser with no Node-only import (the global WebSocket there, `ws` never pulled in)', async () => {
  const out = await build({
    entryPoints: [join(import.meta.dirname, '../../clients/typescript/src/disk.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'mdpDisk',
    write: false,
    logLevel: 'silent',
  });
  expect(out.errors).toEqual([]);
  const text = out.outputFiles[0]?.text ?? '';
  expect(text).not.toMatch(/require\(["']node:/);
  expect(text).not.toMatch(/permessage-deflate/); // ws's own code
});
