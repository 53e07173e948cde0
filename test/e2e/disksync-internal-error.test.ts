/**
 * A stored record on an event subject that is not an event (a raw publish of `{not json}`) is no
 * internal error: a msgpack connection gets a `record_skipped` notice in its place, in order, live, from
 * the ring and from history, and goes on (before, such a record was dropped silently live, and
 * stopped a resume from the ring for good: no `caught_up`, no events, no error).
 *
 * Close code 1011 (internal error) on the disk-sync edge, from something an operator can do: raise
 * NATS's max_payload past the protocol's 4 MB frame limit and store a valid event larger than it
 * (an in-process edge on a private nats-server, the real `ws` client). The edge cannot deliver it:
 * - every connection whose subscription reaches it gets an `error` message (`internal`, 1011, the
 *   catalogue's message, its request id) and the close 1011, holding an exact prefix of the log
 *   (nothing after the event: never a gap);
 * - its session ends (it leaves the registry); a connection on other coins goes on receiving;
 * - the process keeps serving: a new live subscription works, and a resume from before the event
 *   ends the same way, in either encoding, every time.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpack } from 'msgpackr';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import { encodeStoredEvent } from '../../contracts/event-wire.ts';
import { mdSubject } from '../../contracts/subjects.ts';
import type { Nats } from '../../platform/nats.ts';
import { type NatsServerHandle, startNatsServer } from '../../platform/nats-server.ts';
import {
  type Control,
  connectSync,
  type InProcessDisksync,
  type SyncClient,
  startInProcessDisksync,
} from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { trade } from '../support/publisher.ts';

const config = testConfig();
let dir: string;
let server: NatsServerHandle;
let nats: Nats;
let edge: InProcessDisksync;
const clients: SyncClient[] = [];
let n = 0;

function open(): SyncClient {
  const c = connectSync(edge.url);
  clients.push(c);
  return c;
}

async function publishTrade(coin: string, tradeIdChars = 0): Promise<number> {
  const ev = trade(coin, n++);
  if (tradeIdChars > 0) ev.trade_id = `trd_${'x'.repeat(tradeIdChars)}`;
  const ack = await nats.js.publish(mdSubject('synthetic', coin, 'trade'), encodeStoredEvent(ev));
  return ack.seq;
}

/** Bytes that look like a stored event (`{` … `}`) and are not JSON. */
const CORRUPT = '{not json}';
/** BTC trade, corrupt record, BTC trade: stored before the edge started. */
const history: number[] = [];

async function publishRaw(data: string): Promise<number> {
  return (await nats.js.publish(mdSubject('synthetic', 'BTC', 'trade'), data)).seq;
}

/** Control messages whose place among the events is checked (not feed-health warnings). */
const ORDERED = new Set(['subscribed', 'caught_up', 'notice', 'error']);

/** What `c` receives, in order: `E<seq>` per event, `<type>` or `<type><seq>` per control message. */
function received(c: SyncClient): string[] {
  const seen: string[] = [];
  c.ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) for (const e of unpack(data) as { seq: number }[]) seen.push(`E${e.seq}`);
    else if (!data.toString().startsWith('[')) {
      const m = JSON.parse(data.toString()) as Control;
      if (m.code === 'record_skipped') seen.push(`skipped${m.resumed_after}`);
      else if (ORDERED.has(m.type)) seen.push(m.type);
    }
  });
  return seen;
}

/** The close of `c`, with its last control message (the `error` message must come just before). */
async function ended(c: SyncClient): Promise<{ code: number; reason: string; last: Control | undefined }> {
  let close: { code: number; reason: string } | null = null;
  c.closed.then((x) => {
    close = x;
  });
  const got = await eventually(() => close, 30_000, 'the server closing the connection');
  return { ...got, last: c.controls.at(-1) };
}

function expectInternal(r: Awaited<ReturnType<typeof ended>>): void {
  expect(r.code).toBe(1011);
  expect(r.reason.length).toBeGreaterThan(0);
  expect(r.last).toMatchObject({
    type: 'error',
    code: 'internal',
    close_code: 1011,
    message: 'Internal server error.',
  });
  expect(String(r.last?.request_id ?? '')).not.toBe('');
}

beforeAll(async () => {
  // The operator's setting: NATS takes messages up to 8 MB, twice the disk-sync frame limit.
  dir = mkdtempSync(join(tmpdir(), 'mdp-nats-big-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `max_payload: ${2 * MAX_FRAME_BYTES}\n`);
  server = await startNatsServer({ storeDir: join(dir, 'store'), extraArgs: ['-c', conf] });
  nats = await connectTestNats(server.url, config);
  // History the edge's ring does not cover: a corrupt record between two BTC trades.
  for (const data of [null, CORRUPT, null])
    history.push(data ? await publishRaw(data) : await publishTrade('BTC'));
  edge = await startInProcessDisksync(server.url);
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await edge?.close();
  await nats?.nc.close().catch(() => {});
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('a corrupt record is skipped with a message in its place, live, from the ring and from history', async () => {
  const live = open();
  const liveSeen = received(live);
  live.send({ op: 'subscribe', id: 'btc', coins: ['BTC'], encoding: 'msgpack' });
  await live.control('caught_up');
  const b1 = await publishTrade('BTC');
  const bad = await publishRaw(CORRUPT);
  const b2 = await publishTrade('BTC');
  await eventually(() => live.events.some((e) => e.seq === b2), 20_000, 'the BTC trade after the record');
  const skip = (seq: number) => `skipped${seq}`;
  expect(liveSeen).toEqual(['subscribed', 'caught_up', `E${b1}`, skip(bad), `E${b2}`]);
  expect(live.controls.find((c) => c.code === 'record_skipped')).toMatchObject({
    type: 'notice',
    resumed_after: bad,
    coin: 'BTC',
    event_type: 'trade',
  });

  // A resume from before everything: history (a reader), then the ring, then live.
  const resumed = open();
  const resumedSeen = received(resumed);
  resumed.send({ op: 'subscribe', id: 'btc', coins: ['BTC'], encoding: 'msgpack', from_seq: 0 });
  await resumed.control('caught_up', () => true, 30_000);
  const [h1, hBad, h2] = history as [number, number, number];
  const replayed = [`E${h1}`, skip(hBad), `E${h2}`, `E${b1}`, skip(bad), `E${b2}`];
  expect(resumedSeen).toEqual(['subscribed', ...replayed, 'caught_up']);
  const b3 = await publishTrade('BTC');
  await eventually(() => resumed.events.some((e) => e.seq === b3), 20_000, 'a BTC trade, live');
  expect(resumed.controls.some((c) => c.type === 'error')).toBe(false);
  await Promise.all([live.close(), resumed.close()]);
  await eventually(() => edge.edge.registry.size === 0, 20_000, 'both connections closed');
}, 120_000);

it('an event over the frame limit ends its subscribers with 1011, and only them', async () => {
  const btc = open();
  btc.send({ op: 'subscribe', id: 'btc', coins: ['BTC'] });
  const eth = open();
  eth.send({ op: 'subscribe', id: 'eth', coins: ['ETH'], encoding: 'msgpack' });
  await Promise.all([btc.control('caught_up'), eth.control('caught_up')]);
  const { registry } = edge.edge;
  expect(registry.size).toBe(2);

  const before = await publishTrade('BTC');
  await eventually(() => btc.events.some((e) => e.seq === before), 20_000, 'the BTC trade before');
  const big = await publishTrade('BTC', MAX_FRAME_BYTES + 1024);
  const after = await publishTrade('BTC');
  const eth1 = await publishTrade('ETH');

  expectInternal(await ended(btc));
  // An exact prefix: the event before, never the one after the undeliverable event.
  expect(btc.events.map((e) => e.seq)).toEqual([before]);
  expect(btc.events.some((e) => e.seq >= big)).toBe(false);
  await eventually(() => registry.size === 1, 20_000, 'the ended session left the registry');

  // The other connection is untouched and goes on receiving.
  await eventually(() => eth.events.some((e) => e.seq === eth1), 20_000, 'the ETH trade');
  const eth2 = await publishTrade('ETH');
  await eventually(() => eth.events.some((e) => e.seq === eth2), 20_000, 'the next ETH trade');
  expect(eth.controls.some((c) => c.type === 'error')).toBe(false);

  // The process keeps serving: a live BTC subscription after the event receives what follows.
  const live = open();
  live.send({ op: 'subscribe', id: 'btc', coins: ['BTC'] });
  await live.control('caught_up');
  const next = await publishTrade('BTC');
  await eventually(() => live.events.some((e) => e.seq === next), 20_000, 'a BTC trade, live');
  expect(live.events.map((e) => e.seq)).toEqual([next]);

  // A resume from before the event reaches it again and ends the same way, in either encoding.
  for (const encoding of ['json', 'msgpack'] as const) {
    const resumed = open();
    resumed.send({ op: 'subscribe', id: 'again', coins: ['BTC'], from_seq: before, encoding });
    expectInternal(await ended(resumed));
    expect(resumed.events).toEqual([]);
  }
  expect(after).toBeGreaterThan(big);
  await eventually(() => registry.size === 2, 20_000, 'only the ETH and live connections open');
  await Promise.all([eth.close(), live.close()]);
}, 120_000);
