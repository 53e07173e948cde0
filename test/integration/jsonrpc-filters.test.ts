/**
 * Polling filters of the JSON-RPC edge, two edges on one real nats-server sharing the filter
 * bucket: events since the last poll with their `seq`, never a gap or a duplicate (polls alternating
 * between edges and racing each other, while events are published, and a cursor older than the
 * tail's ring read from JetStream), pages of `JSONRPC_FILTER_MAX_EVENTS`, the tier's cap (-32005),
 * uninstall, expiry after the TTL without a poll, and filters private to their key. An account's
 * own events (on `OWN`) come to its keys' filters beside the platform's, each once, never to
 * another account's: a filter keeps a cursor on each stream (resumed by `last_own_seq`, or by the
 * stored time of `last_event_id`), and a filter stored before own cursors existed starts own events
 * at `OWN`'s end.
 */
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MarketEvent } from '../../contracts/events.ts';
import { KV_BUCKETS, STREAMS } from '../../contracts/streams.ts';
import { ownSubject } from '../../contracts/subjects.ts';
import { FilterStore } from '../../gateways/jsonrpc/filter-store.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats, type Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { call, startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { book, publishAtRate, publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq, storedSeqsMatching } from '../support/stored-seqs.ts';

// Long enough for a poll on a loaded machine, short enough to wait out.
const TTL_S = 5;
const PAGE = 50;
// A ring of 16 events: a filter polled after more than 16 events reads from JetStream first.
const config = testConfig({
  JSONRPC_FILTER_TTL_S: String(TTL_S),
  JSONRPC_FILTER_MAX_EVENTS: String(PAGE),
  SSE_RING_SIZE: '16',
});
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let a: TestJsonRpc;
let b: TestJsonRpc;
let key: string;

type Event = { seq: number; symbol: string; event_type: string; own?: boolean };

const publish = (events: MarketEvent[], subject?: (e: MarketEvent) => string) =>
  publishNow(nats.js, events, subject);

const as = (k: string) => ({ 'x-api-key': k });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** An account's own events, published straight to `OWN`. */
const ownOf = (accountId: string) => (e: MarketEvent) =>
  ownSubject(accountId, e.source, e.symbol, e.event_type);
const newFilter = async (url: string, spec: unknown, k = key) => call(url, 'md_newFilter', [spec], as(k));
const changes = async (url: string, id: unknown, k = key) => call(url, 'md_getFilterChanges', [id], as(k));
const poll = async (url: string, id: string, k = key): Promise<Event[]> => {
  const answer = await changes(url, id, k);
  if (answer.error) throw new Error(JSON.stringify(answer.error));
  return answer.result as Event[];
};
/** Polls alternately on both edges until `n` events have come, failing on a poll with nothing new for too long. */
async function drain(id: string, n: number, k = key): Promise<Event[]> {
  const got: Event[] = [];
  let idle = 0;
  for (let i = 0; got.length < n; i++) {
    const page = await poll(i % 2 ? b.url : a.url, id, k);
    got.push(...page);
    idle = page.length ? 0 : idle + 1;
    if (idle > 200) throw new Error(`only ${got.length} of ${n} events`);
    if (!page.length) await new Promise((r) => setTimeout(r, 10));
  }
  return got;
}
beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  a = await startTestJsonRpc(nats, config, { guard: 'keys' });
  b = await startTestJsonRpc(nats, config, { guard: 'keys' });
  key = (await accounts.key('quant')).key;
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await base?.close();
});

describe('a polling filter', () => {
  it('returns the matching events since the last poll, with their seq, on either edge', async () => {
    const id = (await newFilter(a.url, { coins: ['BTC'], event_types: ['trade'] })).result as string;
    expect(id).toMatch(/^0x[0-9a-f]{28}$/);
    const after = await lastSeq(nats);
    expect(await poll(b.url, id)).toEqual([]);
    await publish([trade('BTC', 1), trade('ETH', 2), book('BTC', 3), trade('BTC', 4)]);
    const events = await drain(id, 2);
    expect(events.map((e) => [e.symbol, e.event_type])).toEqual([
      ['BTC', 'trade'],
      ['BTC', 'trade'],
    ]);
    expect(events.map((e) => e.seq)).toEqual(
      await storedSeqsMatching(nats, 'MD', { after, matches: /^md\.[^.]+\.BTC\.trade$/ }),
    );
    expect(await poll(a.url, id)).toEqual([]);
  });

  it('never skips or repeats an event while events are published and polls alternate and race between edges', async () => {
    const id = (await newFilter(b.url, { coins: ['SOL', 'HYPE'] })).result as string;
    const after = await lastSeq(nats);
    const publisher = publishAtRate(nats.js, ['SOL', 'HYPE', 'ETH'], 600, { booksEvery: 4 });
    const got: Event[] = [];
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline) {
      // Two polls at once, one per edge: the compare-and-swap of the cursor lets one win per event.
      const pages = await Promise.all([poll(a.url, id), poll(b.url, id)]);
      for (const p of pages) got.push(...p);
      await new Promise((r) => setTimeout(r, 20));
    }
    await publisher.stop();
    const expected = await storedSeqsMatching(nats, 'MD', {
      after,
      matches: /^md\.[^.]+\.(SOL|HYPE)\.[^.]+$/,
    });
    got.push(...(await drain(id, expected.length - got.length)));
    // Pages of two racing polls arrive in either order; each event must come exactly once.
    const seqs = got.map((e) => e.seq).sort((x, y) => x - y);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual(expected);
  });

  it('reads a cursor older than the ring from JetStream and pages by JSONRPC_FILTER_MAX_EVENTS', async () => {
    const id = (await newFilter(a.url, { coins: ['ETH'], event_types: ['trade'] })).result as string;
    const after = await lastSeq(nats);
    await publish(Array.from({ length: 120 }, (_, i) => trade(i % 2 ? 'ETH' : 'BTC', 1_000 + i)));
    await publish(Array.from({ length: 60 }, (_, i) => trade('ETH', 2_000 + i)));
    const expected = await storedSeqsMatching(nats, 'MD', { after, matches: /^md\.[^.]+\.ETH\.trade$/ });
    expect(expected).toHaveLength(120);
    const sizes: number[] = [];
    const got: Event[] = [];
    while (got.length < expected.length) {
      const page = await poll(got.length % 2 ? a.url : b.url, id);
      if (page.length) sizes.push(page.length);
      got.push(...page);
    }
    expect(sizes.every((n) => n <= PAGE)).toBe(true);
    expect(sizes.slice(0, 2)).toEqual([PAGE, PAGE]);
    expect(got.map((e) => e.seq)).toEqual(expected);
  });

  it('sees the key’s own account events (from OWN, each once) and no other account’s', async () => {
    const owner = await accounts.key('pro');
    const other = await accounts.key('pro');
    const mine = (await newFilter(a.url, {}, owner.key)).result as string;
    const theirs = (await newFilter(a.url, {}, other.key)).result as string;
    const mdAfter = await lastSeq(nats);
    const ownAfter = await lastSeq(nats, STREAMS.OWN);
    await publish([trade('OWNED', 1)], ownOf(owner.accountId));
    await publish([trade('BTC', 77)]);
    const ownerEvents = await drain(mine, 2, owner.key);
    expect(ownerEvents.map((e) => e.symbol).sort()).toEqual(['BTC', 'OWNED']);
    const owned = ownerEvents.find((e) => e.symbol === 'OWNED') as Event;
    // An own event: OWN's sequence, marked `own`.
    expect(owned.own).toBe(true);
    expect([owned.seq]).toEqual(await storedSeqsMatching(nats, STREAMS.OWN, { after: ownAfter }));
    expect(ownerEvents.find((e) => e.symbol === 'BTC')?.own).toBeUndefined();
    const otherEvents = await drain(theirs, 1, other.key);
    expect(otherEvents.map((e) => e.symbol)).toEqual(['BTC']);
    expect((await newFilter(a.url, { coins: ['OWNED'] }, other.key)).error).toMatchObject({ code: -32003 });

    // More of both than a page, over polls alternating between edges: every one once, nothing of
    // the other account's, each stream in its order.
    await publish(
      Array.from({ length: 70 }, (_, i) => trade('OWNED', 100 + i)),
      ownOf(owner.accountId),
    );
    await publish(
      Array.from({ length: 70 }, (_, i) => trade('OWNED', 200 + i)),
      ownOf(other.accountId),
    );
    await publish(Array.from({ length: 70 }, (_, i) => trade('BTC', 300 + i)));
    const mdSeqs = await storedSeqsMatching(nats, STREAMS.MD, { after: mdAfter });
    const ownSeqs = await storedSeqsMatching(nats, STREAMS.OWN, {
      after: ownAfter,
      matches: new RegExp(`^own\\.${owner.accountId}\\.`),
    });
    expect(ownSeqs).toHaveLength(71);
    const all = [...ownerEvents, ...(await drain(mine, mdSeqs.length + ownSeqs.length - 2, owner.key))];
    expect(all.filter((e) => !e.own).map((e) => e.seq)).toEqual(mdSeqs);
    expect(all.filter((e) => e.own).map((e) => e.seq)).toEqual(ownSeqs);
    expect(await poll(b.url, mine, owner.key)).toEqual([]);
    const otherOwn = await storedSeqsMatching(nats, STREAMS.OWN, {
      after: ownAfter,
      matches: new RegExp(`^own\\.${other.accountId}\\.`),
    });
    expect(otherOwn).toHaveLength(70);
    const otherAll = [
      ...otherEvents,
      ...(await drain(theirs, mdSeqs.length + otherOwn.length - 1, other.key)),
    ];
    expect(otherAll.filter((e) => !e.own).map((e) => e.seq)).toEqual(mdSeqs);
    // Its own events only: none of the owner's.
    expect(otherAll.filter((e) => e.own).map((e) => e.seq)).toEqual(otherOwn);
    expect(await poll(a.url, theirs, other.key)).toEqual([]);
  });

  it('resumes own events after last_own_seq, or after what OWN stored by the time of last_event_id', async () => {
    const owner = await accounts.key('pro');
    const ownAfter = await lastSeq(nats, STREAMS.OWN);
    await publish([trade('MINE', 1)], ownOf(owner.accountId));
    await sleep(15);
    await publish([trade('BTC', 2)]);
    const cut = await lastSeq(nats);
    await sleep(15);
    await publish([trade('MINE', 3)], ownOf(owner.accountId));
    await publish([trade('BTC', 4)]);
    const [first, second] = await storedSeqsMatching(nats, STREAMS.OWN, {
      after: ownAfter,
      matches: new RegExp(`^own\\.${owner.accountId}\\.`),
    });
    const seqsOf = (events: Event[]) => events.map((e) => [e.symbol, e.seq, e.own ?? false]);
    const [mdNext] = await storedSeqsMatching(nats, STREAMS.MD, { after: cut });
    // No own position: the own event stored before the platform's `cut` is not sent again.
    const byTime = (await newFilter(a.url, { coins: ['BTC', 'MINE'], last_event_id: cut }, owner.key))
      .result as string;
    expect(seqsOf(await drain(byTime, 2, owner.key)).sort()).toEqual(
      [
        ['BTC', mdNext, false],
        ['MINE', second, true],
      ].sort(),
    );
    // With one: exactly after it.
    const exact = (
      await newFilter(
        a.url,
        { coins: ['BTC', 'MINE'], last_event_id: cut, last_own_seq: (first as number) - 1 },
        owner.key,
      )
    ).result as string;
    const got = await drain(exact, 3, owner.key);
    expect(got.filter((e) => e.own).map((e) => e.seq)).toEqual([first, second]);
    expect(got.filter((e) => !e.own).map((e) => e.seq)).toEqual([mdNext]);
    expect(await poll(b.url, exact, owner.key)).toEqual([]);
  });

  it('reads own events older than the OWN tail from JetStream, each once', async () => {
    const owner = await accounts.key('pro');
    const ownAfter = await lastSeq(nats, STREAMS.OWN);
    const cut = await lastSeq(nats);
    await sleep(15);
    await publish(
      Array.from({ length: 30 }, (_, i) => trade('OLDER', i)),
      ownOf(owner.accountId),
    );
    await publish([trade('BTC', 5)]);
    // An edge on its own connection: its OWN tail starts now, after those own events.
    const conn = await connectNats(base.server.url, 'test', createLogger('error', 'test'));
    const late = await startTestJsonRpc(conn, config, { guard: 'keys' });
    try {
      const id = (await newFilter(late.url, { coins: ['OLDER', 'BTC'], last_event_id: cut }, owner.key))
        .result as string;
      const own = await storedSeqsMatching(nats, STREAMS.OWN, { after: ownAfter });
      const md = await storedSeqsMatching(nats, STREAMS.MD, { after: cut });
      const got: Event[] = [];
      for (let i = 0; got.length < own.length + md.length && i < 100; i++)
        got.push(...(await poll(late.url, id, owner.key)));
      expect(got.filter((e) => e.own).map((e) => e.seq)).toEqual(own);
      expect(got.filter((e) => !e.own).map((e) => e.seq)).toEqual(md);
      expect(await poll(late.url, id, owner.key)).toEqual([]);
    } finally {
      await late.close();
      await conn.nc.close();
    }
  });

  it('starts own events at OWN’s end for a filter stored without an own cursor', async () => {
    const owner = await accounts.key('pro');
    // A filter as an edge stored it before own cursors existed (no `own_cursor`).
    const store = await FilterStore.open(nats, TTL_S * 1_000);
    await publish([trade('OLD', 1)], ownOf(owner.accountId));
    const id = await store.install(owner.keyId, 10, {
      coins: null,
      event_types: null,
      sources: null,
      viewer: owner.accountId,
      cursor: await lastSeq(nats),
    });
    expect(await poll(a.url, id, owner.key)).toEqual([]);
    await publish([trade('OLD', 2)], ownOf(owner.accountId));
    const ownSeq = await lastSeq(nats, STREAMS.OWN);
    const got = await drain(id, 1, owner.key);
    expect(got.map((e) => [e.symbol, e.seq, e.own])).toEqual([['OLD', ownSeq, true]]);
    expect(await poll(b.url, id, owner.key)).toEqual([]);
  });
});

describe('filter ids', () => {
  it('belong to their key: another key polling one gets -32602, like an unknown id', async () => {
    const id = (await newFilter(a.url, {})).result as string;
    const stranger = await accounts.key('quant');
    expect((await changes(b.url, id, stranger.key)).error).toMatchObject({
      code: -32602,
      data: { error: 'not_found' },
    });
    expect((await changes(b.url, `0x${'0'.repeat(28)}`)).error).toMatchObject({ code: -32602 });
    expect((await changes(b.url, 'not-an-id')).error).toMatchObject({ code: -32602 });
  });

  it('are uninstalled once: true, then false, and a poll after is -32602', async () => {
    const id = (await newFilter(a.url, {})).result as string;
    expect((await call(b.url, 'md_uninstallFilter', [id], as(key))).result).toBe(true);
    expect((await call(a.url, 'md_uninstallFilter', [id], as(key))).result).toBe(false);
    expect((await changes(a.url, id)).error).toMatchObject({ code: -32602 });
  });

  it('expire after the TTL without a poll, and stay alive while polled', async () => {
    const idle = (await newFilter(a.url, {})).result as string;
    const polled = (await newFilter(a.url, {})).result as string;
    const until = Date.now() + TTL_S * 1_000 + 600;
    while (Date.now() < until) {
      expect((await changes(b.url, polled)).error).toBeUndefined();
      await new Promise((r) => setTimeout(r, 300));
    }
    expect((await changes(b.url, idle)).error).toMatchObject({ code: -32602, data: { error: 'not_found' } });
    expect((await changes(a.url, polled)).error).toBeUndefined();
  });
});

describe('the filter bucket', () => {
  it('takes the configured TTL as its max age, also when it was made with another', async () => {
    const ttlOf = async () => (await (await new Kvm(nats.js).open(KV_BUCKETS.jsonrpcFilters)).status()).ttl;
    expect(await ttlOf()).toBe(TTL_S * 1_000);
    await FilterStore.open(nats, 60_000);
    expect(await ttlOf()).toBe(60_000);
    await FilterStore.open(nats, TTL_S * 1_000);
    expect(await ttlOf()).toBe(TTL_S * 1_000);
  });
});

describe('the subscription cap', () => {
  it('allows the tier’s number of live filters per key and refuses one more with -32005', async () => {
    const basic = (await accounts.key('basic')).key;
    const ids = await Promise.all(
      Array.from({ length: 10 }, (_, i) => newFilter(i % 2 ? a.url : b.url, {}, basic)),
    );
    expect(ids.every((r) => typeof r.result === 'string')).toBe(true);
    expect(new Set(ids.map((r) => r.result)).size).toBe(10);
    const over = await newFilter(a.url, {}, basic);
    expect(over.error).toMatchObject({ code: -32005, data: { error: 'subscription_limit', limit: 10 } });
    expect((await call(b.url, 'md_uninstallFilter', [ids[3]?.result], as(basic))).result).toBe(true);
    expect(typeof (await newFilter(b.url, {}, basic)).result).toBe('string');
  });

  it('answers -32003 for an unknown coin and -32002 for a source outside the key’s chains', async () => {
    expect((await newFilter(a.url, { coins: ['BTC', 'NOPE'] })).error).toMatchObject({ code: -32003 });
    const scoped = (await accounts.key('pro', { scopes: ['stream:read', 'chain:hyperliquid'] })).key;
    expect((await newFilter(a.url, { sources: ['synthetic'] }, scoped)).error).toMatchObject({
      code: -32002,
    });
    expect((await newFilter(a.url, { event_types: ['quote'] })).error).toMatchObject({ code: -32602 });
  });
});

describe('a filter started at a position', () => {
  it('returns the events after `last_event_id` first', async () => {
    const before = await lastSeq(nats);
    await publish([trade('BTC', 501), trade('BTC', 502)]);
    const id = (await newFilter(a.url, { coins: ['BTC'], event_types: ['trade'], last_event_id: before }))
      .result;
    const events = await drain(id as string, 2);
    expect(events.map((e) => e.seq)).toEqual(
      await storedSeqsMatching(nats, 'MD', { after: before, matches: /^md\.[^.]+\.BTC\.trade$/ }),
    );
  });

  it('refuses a position the log no longer retains with -32008', async () => {
    const last = await lastSeq(nats);
    await nats.jsm.streams.purge('MD', { seq: last });
    const answer = await newFilter(a.url, { last_event_id: 1 });
    expect(answer.error).toMatchObject({
      code: -32008,
      data: { error: 'invalid_time_range', first_seq: last },
    });
  });
});
