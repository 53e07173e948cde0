/**
 * Events a caller normalizes with `stream: true` are its account's own, stored on `OWN` (never in
 * the platform's `MD`), and on the unified stream: delivered live, from the ring and from
 * JetStream history to keys of that account only, never to another account's key, and never
 * counted among the platform's known coins (so never in a stale-feed report). The attack
 * is the scenario: a forged Binance BTCUSDT print at 1.00. A stream that delivered an own event
 * has ids `N:K` (platform and own positions), and resumes from one exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { replayStats } from '../../gateways/core/replay-source.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { trade } from '../support/publisher.ts';
import { openSse, type SseMessage, type SseStream } from '../support/sse.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const RING = 16;
let stack: TestStack;
let gw: TestGateway;
/** The account that publishes its own events (and a second key of the same account). */
const owner = { key: '', secondKey: '', accountId: '' };
/** Another account, Quant, with every scope. */
let otherKey = '';
let sentinel = 0;

beforeAll(async () => {
  stack = await startStack();
  gw = await startTestGateway(stack.server.url, { SSE_RING_SIZE: String(RING) }, { guard: 'keys' });
  const a = await stack.accounts.key('pro', { scopes: ['mcp', 'stream:read'] });
  Object.assign(owner, { key: a.key, accountId: a.accountId });
  owner.secondKey = (await stack.accounts.service.createKey(a.accountId, { name: 'second', scopes: [] })).key;
  otherKey = (await stack.accounts.key('quant')).key;
});

afterAll(async () => {
  await gw?.close();
  await stack?.close();
});

/** The forged print: a Binance BTCUSDT trade at 1.00, unique per call. */
let forged = 0;
async function publishForged(): Promise<void> {
  forged++;
  const payload = {
    e: 'trade',
    s: 'BTCUSDT',
    t: forged,
    p: '1.00',
    q: '0.5',
    T: 1_700_000_000_000 + forged,
    m: false,
  };
  const res = await fetch(`${stack.http.url}/mcp/normalize`, {
    method: 'POST',
    headers: { 'x-api-key': owner.key, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'binance', events: [{ payload }], stream: true }),
  });
  expect(await res.json()).toMatchObject({ published: 1 });
}

/** `n` platform events (synthetic BTC trades); resolves with the last one's trade id. */
async function publishPlatform(n: number): Promise<string> {
  const batch = Array.from({ length: n }, () => {
    sentinel++;
    return { event: trade('BTC', 1_000_000 + sentinel), id: `sentinel.${sentinel}`, ingestUs: nowUs() };
  });
  await publishEvents(stack.nats.js, batch, createLogger('silent'));
  return `trd_BTC_${1_000_000 + sentinel}`;
}

type Reader = { got: Record<string, unknown>[]; ids: string[]; stream: SseStream };

async function read(key: string, lastEventId?: number | string, query = ''): Promise<Reader> {
  const got: Record<string, unknown>[] = [];
  const ids: string[] = [];
  const stream = await openSse(
    `${gw.url}/api/v1/unified/stream${query}`,
    (m: SseMessage) => {
      if (m.event !== 'message') return;
      got.push(JSON.parse(m.data));
      ids.push(m.id ?? '');
    },
    { 'x-api-key': key, ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }) },
  );
  expect(stream.status).toBe(200);
  return { got, ids, stream };
}

/** Polls (no fixed sleep) until every reader has received the platform event `tradeId`. */
async function until(readers: Reader[], tradeId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!readers.every((r) => r.got.some((e) => e.trade_id === tradeId))) {
    if (Date.now() > deadline) throw new Error(`${tradeId} did not arrive`);
    await new Promise((r) => setTimeout(r, 5));
  }
  for (const r of readers) r.stream.abort();
}

const forgedIn = (r: Reader) => r.got.filter((e) => e.source === 'binance' && e.symbol === 'BTCUSDT');

describe("an account's own events on the unified stream", () => {
  it("reach that account's keys live, and no other account's", async () => {
    const mine = await read(owner.key);
    const mineToo = await read(owner.secondKey);
    const theirs = await read(otherKey);
    await publishForged();
    await until([mine, mineToo, theirs], await publishPlatform(1));
    expect(forgedIn(mine)).toEqual([
      expect.objectContaining({ price: 1, source: 'binance', symbol: 'BTCUSDT' }),
    ]);
    expect(forgedIn(mineToo)).toHaveLength(1);
    expect(forgedIn(theirs)).toEqual([]);
  });

  it.each([
    { path: 'the ring', platformAfter: 1, via: 'fromRing' as const },
    { path: 'JetStream history', platformAfter: RING * 3, via: 'fromStream' as const },
  ])('reach only that account when a client resumes from $path', async ({ platformAfter, via }) => {
    const from = await lastSeq(stack.nats);
    const resumedBefore = replayStats[via];
    await publishForged();
    const last = await publishPlatform(platformAfter);
    // Resumed readers start after `from`: the forged event is behind them in the stream.
    const readers = [
      await read(owner.key, from),
      await read(otherKey, from),
      await read(otherKey, from, '?source=binance,synthetic'),
    ];
    await until(readers.slice(0, 2), last);
    const [mine, theirs, theirsFiltered] = readers as [Reader, Reader, Reader];
    expect(forgedIn(mine)).toHaveLength(1);
    expect(forgedIn(theirs)).toEqual([]);
    // Nothing of the platform's is missing for either: the same events, minus the forged one.
    expect(theirs.got.map((e) => e.seq)).toEqual(
      mine.got.filter((e) => e.source !== 'binance').map((e) => e.seq),
    );
    await eventually(
      () => theirsFiltered.got.some((e) => e.trade_id === last),
      10_000,
      `platform event ${last} on the filtered stream`,
      5,
    );
    theirsFiltered.stream.abort();
    expect(forgedIn(theirsFiltered)).toEqual([]);
    // Each keyed reader positions the platform's feed (by `via`) and its own (`OWN`'s ring).
    expect(replayStats[via]).toBe(resumedBefore + (via === 'fromRing' ? 6 : 3));
  });

  it('are stored on OWN under the account, and MD takes nothing but the platform feed', async () => {
    await publishForged();
    const own = await stack.nats.jsm.streams.info(STREAMS.OWN, { subjects_filter: '>' });
    expect(Object.keys(own.state.subjects ?? {})).toContain(`own.${owner.accountId}.binance.BTCUSDT.trade`);
    expect(own.config.subjects).toEqual(['own.>']);
    expect(own.config.max_bytes).toBeGreaterThan(0);
    expect(own.config.max_age).toBeGreaterThan(0);
    const md = await stack.nats.jsm.streams.info(STREAMS.MD, { subjects_filter: '>' });
    expect(Object.keys(md.state.subjects ?? {}).filter((s) => s.split('.').length !== 4)).toEqual([]);
    expect(md.config.subjects).toEqual(['md.*.*.*']);
    // The old account subject is no stream's: JetStream refuses it.
    await expect(
      stack.nats.js.publish(`md.binance.BTCUSDT.trade.${owner.accountId}`, '{}'),
    ).rejects.toThrow();
  });

  it('carry both positions in the id once one is delivered, and a cut resumes exactly', async () => {
    const mine = await read(owner.key);
    await publishPlatform(2);
    await publishForged();
    const last = await publishPlatform(2);
    await until([mine], last);
    const at = mine.got.findIndex((e) => e.own === true);
    expect(at).toBeGreaterThan(0);
    // Before the own event: one number; from it on: N:K, K its OWN sequence.
    expect(mine.ids[at - 1]).toMatch(/^\d+$/);
    const [md, own] = (mine.ids[at] as string).split(':').map(Number);
    expect(md).toBe(Number(mine.ids[at - 1]));
    expect(own).toBe(mine.got[at]?.seq);
    expect(mine.ids.slice(at + 1).every((id) => id.endsWith(`:${own}`))).toBe(true);

    // Cut right after the own event: the platform events after it come, the own event not again.
    // (The two logs interleave as they arrive: the own event may come after both platform events
    // published after it, and then none follows it in `mine`.)
    const resumed = await read(owner.key, mine.ids[at]);
    await publishForged();
    const after = await publishPlatform(1);
    await until([resumed], after);
    const platformIds = (got: Record<string, unknown>[]) =>
      got.filter((e) => e.own !== true).map((e) => e.trade_id);
    expect(platformIds(resumed.got)).toEqual([...platformIds(mine.got.slice(at + 1)), after]);
    const ownSeqs = resumed.got.filter((e) => e.own === true).map((e) => e.seq as number);
    expect(ownSeqs).toHaveLength(1);
    expect(ownSeqs[0]).toBeGreaterThan(own as number);

    // A platform-only id from before the own event: own events stored after that event come.
    const plain = await read(owner.key, mine.ids[at - 1]);
    await until([plain], after);
    expect(plain.got.filter((e) => e.own === true).map((e) => e.seq)).toEqual([own, ownSeqs[0]]);
    // Another account's key never sees them, whatever id it sends.
    const theirs = await read(otherKey, `${mine.ids[at - 1]}:0`);
    await until([theirs], after);
    expect(theirs.got.filter((e) => e.own === true)).toEqual([]);
  });

  it("never count among the platform's known coins, so never in a stale-feed report", async () => {
    await publishForged();
    const mine = await read(owner.key);
    await publishForged();
    await until([mine], await publishPlatform(1));
    expect(forgedIn(mine)).toHaveLength(1);
    expect(gw.tail.health.knows('BTCUSDT')).toBe(false);
    expect(gw.tail.health.coins()).not.toContain('BTCUSDT');
    // A gateway starting now reads the coins already in the stream: still not this one.
    const fresh = await LiveTail.start(gw.nats, createLogger('silent'), {
      ringSize: 16,
      staleAfterMs: 60_000,
      expectedCoins: [],
    });
    try {
      expect(fresh.health.knows('BTC')).toBe(true);
      expect(fresh.health.knows('BTCUSDT')).toBe(false);
    } finally {
      fresh.stop();
    }
    const res = await fetch(`${gw.url}/api/v1/unified/stream?coin=BTCUSDT`, {
      headers: { 'x-api-key': otherKey },
    });
    expect({ status: res.status, error: (await res.json()).error }).toEqual({
      status: 404,
      error: 'coin_not_found',
    });
    // Its owner may filter by it (any spelling); to another account it does not exist.
    const own = await read(owner.key, undefined, '?coin=btcusdt');
    await publishForged();
    await eventually(() => forgedIn(own).length > 0, 10_000, "the owner's own BTCUSDT print", 5);
    own.stream.abort();
    expect(forgedIn(own)).toHaveLength(1);
  });
});
