/**
 * `GET /stream/live`: equal (symbol, seed) give the same event contents in the same order with live
 * timestamps; concurrent clients — also on two separate app instances — share one producer on the
 * SIM stream: every stored message of the session is a distinct event (none stored twice);
 * missing or bad parameters → 400; the scope is `stream`.
 */
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestHttp, type TestHttp } from '../support/http-app.ts';
import { openSse } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let a: TestHttp;
let b: TestHttp;
let key: string;

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  a = await startTestHttp(nats, config, accounts);
  b = await startTestHttp(nats, config, accounts);
  key = (await accounts.key('pro')).key;
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await base?.close();
});

type Ev = Record<string, unknown>;
/** Reads events until `enough(events)` says so, then closes. */
async function readUntil(url: string, enough: (got: Ev[]) => boolean): Promise<Ev[]> {
  const got: Ev[] = [];
  let done: () => void = () => {};
  const reached = new Promise<void>((r) => (done = r));
  const s = await openSse(
    url,
    (m) => {
      if (m.event !== 'message') return;
      got.push(JSON.parse(m.data));
      if (enough(got)) done();
    },
    { 'x-api-key': key },
  );
  expect(s.status).toBe(200);
  await reached;
  s.abort();
  return got;
}
/** Reads `n` events, then closes. */
const read = async (url: string, n: number) => (await readUntil(url, (got) => got.length >= n)).slice(0, n);
const content = (e: Ev) => {
  const { seq: _s, timestamp_ms: _t, capture_time_ms: _c, ingest_us: _i, publish_us: _p, ...rest } = e;
  return rest;
};
/** What makes an event itself: everything but where and when it was stored. */
const identity = (e: Ev) => {
  const { seq: _s, ingest_us: _i, publish_us: _p, ...rest } = e;
  return JSON.stringify(rest);
};
/** Messages stored on SIM under `prefix` with a sequence in [from, to]. */
async function storedBetween(prefix: string, from: number, to: number): Promise<number> {
  let n = 0;
  for (let seq = from; seq <= to; seq++) {
    const m = await nats.jsm.streams.getMessage(STREAMS.SIM, { seq }).catch(() => null);
    if (m?.subject.startsWith(prefix)) n++;
  }
  return n;
}

describe('live synthetic stream', () => {
  it('serves clients of one (symbol, seed) from one producer, across app instances, identically', async () => {
    const [x, y] = await Promise.all([
      read(`${a.url}/stream/live?symbol=BTC&seed=7`, 40),
      read(`${b.url}/stream/live?symbol=BTC&seed=7`, 40),
    ]);
    const ySeqs = new Set(y.map((e) => e.seq));
    const common = x.filter((e) => ySeqs.has(e.seq));
    expect(common.length).toBeGreaterThan(20);
    for (const e of common) expect(content(y.find((f) => f.seq === e.seq) as Ev)).toEqual(content(e));
    for (const e of x) {
      expect(['trade', 'book']).toContain(e.event_type);
      expect(Math.abs((e.timestamp_ms as number) - Date.now())).toBeLessThan(60_000);
    }
    // Every message stored for the session between the first and last event a client saw was
    // delivered to it (one tail, in order) and is a distinct event: a second producer would store
    // each event again under another sequence.
    for (const got of [x, y]) {
      const seqs = got.map((e) => e.seq as number);
      expect(seqs).toEqual([...seqs].sort((p, q) => p - q));
      const first = seqs[0] as number;
      const last = seqs.at(-1) as number;
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(await storedBetween('sim.BTC.7.', first, last)).toBe(seqs.length);
      expect(new Set(got.map(identity)).size).toBe(got.length);
    }
  });

  it('gives a new session of the same (symbol, seed) the same contents from the start; another seed differs', async () => {
    const first = await read(`${a.url}/stream/live?symbol=ETH&seed=11`, 30);
    const other = await read(`${a.url}/stream/live?symbol=ETH&seed=12`, 30);
    // Wait out the first session (10 s of interest after its last client): its lease is released.
    const sessions = await new Kvm(nats.js).open(KV_BUCKETS.simSessions);
    await eventually(
      async () => (await sessions.get('lease.ETH.11'))?.operation !== 'PUT',
      25_000,
      'the ETH/11 session ending (its lease released)',
      100,
    );
    const again = await read(`${b.url}/stream/live?symbol=ETH&seed=11`, 30);
    expect(again.map(content)).toEqual(first.map(content));
    expect(other.map(content)).not.toEqual(first.map(content));
  }, 40_000);

  it('refuses a missing symbol, a bad seed, unknown parameters; needs the stream scope', async () => {
    const headers = { 'x-api-key': key };
    await expectError(await fetch(`${a.url}/stream/live`, { headers }), 400, 'invalid_params', 'symbol');
    await expectError(
      await fetch(`${a.url}/stream/live?symbol=BTC&seed=-1`, { headers }),
      400,
      'invalid_params',
      'seed',
    );
    await expectError(
      await fetch(`${a.url}/stream/live?symbol=BTC&speed=2`, { headers }),
      400,
      'invalid_params',
      'speed',
    );
    await expectError(await fetch(`${a.url}/stream/live?symbol=BTC`), 401, 'invalid_key');
    const generateOnly = (await accounts.key('pro', { scopes: ['generate'] })).key;
    await expectError(
      await fetch(`${a.url}/stream/live?symbol=BTC`, { headers: { 'x-api-key': generateOnly } }),
      403,
      'forbidden',
    );
  });
});
