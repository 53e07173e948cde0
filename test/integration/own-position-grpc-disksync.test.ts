/**
 * A stream's two positions on gRPC and disk-sync (issue 27: accounts' own events on `OWN`): an
 * account's own events (POST /mcp/normalize `stream: true`) come marked `own` with their `OWN`
 * sequence as `seq`, interleaved with the platform's `MD` events. A client cut after an own event
 * resumes with both positions (gRPC `after_seq` + `after_own_seq`, disk-sync `from_seq` +
 * `from_own_seq`): every platform event and every own event exactly once, in each stream's order.
 * The bidirectional `Stream` keeps both across a change of subscription. Another account's key sees
 * none of them.
 */
import type { ClientReadableStream } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../platform/logger.ts';
import { connectSync, startGuardedDisksync } from '../support/disksync.ts';
import { eventually } from '../support/eventually.ts';
import { keyMetadata, type PriceClient, priceClient, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { publishOwn, publishPlatform } from '../support/tenant-isolation.ts';

let stack: TestStack;
let grpc: TestGrpc;
let client: PriceClient;
let disk: { address: string; stop(): Promise<void> };
const keys = { owner: '', other: '' };

beforeAll(async () => {
  stack = await startStack();
  grpc = await startTestGrpc(stack.nats, stack.config);
  client = priceClient(grpc.target);
  disk = await startGuardedDisksync(stack.nats, stack.config, createLogger('silent'));
  keys.owner = (await stack.accounts.key('quant', { scopes: ['mcp', 'stream:read'] })).key;
  keys.other = (await stack.accounts.key('quant')).key;
}, 60_000);

afterAll(async () => {
  client?.close();
  await disk?.stop();
  await grpc?.close();
  await stack?.close();
});

type Item = { seq: number; own: boolean; trade_id: string };

/** The trades of gRPC FeedMessages (batches unpacked). */
function tradesOf(m: Record<string, unknown>): Item[] {
  if (m.batch) return (m.batch as { messages: Record<string, unknown>[] }).messages.flatMap(tradesOf);
  const t = m.trade as { seq: string | number; own?: boolean; trade_id: string } | undefined;
  return t ? [{ seq: Number(t.seq), own: t.own === true, trade_id: t.trade_id }] : [];
}

/** A StreamEvents (or bidirectional) reader of BTC trades, open once its headers came. */
async function grpcRead(
  call: ClientReadableStream<Record<string, unknown>>,
): Promise<{ got: Item[]; close(): void }> {
  const got: Item[] = [];
  call.on('data', (m: Record<string, unknown>) => got.push(...tradesOf(m)));
  call.on('error', () => {});
  await new Promise((r) => call.once('metadata', r));
  return { got, close: () => call.cancel() };
}

const has = (got: Item[], tradeId: string) => got.some((e) => e.trade_id === tradeId);
const seqs = (got: Item[], own: boolean) => got.filter((e) => e.own === own).map((e) => e.seq);
/** Each strictly increasing: in order, no duplicate. */
const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > (xs[i - 1] as number));

/** Per stream (platform, own), what `first` had after its `cut` first items begins `resumed`'s. */
function firstAfterCut(first: Item[], resumed: Item[], cut: number): boolean {
  const rest = first.slice(cut);
  return [false, true].every((own) => {
    const want = seqs(rest, own);
    return seqs(resumed, own).slice(0, want.length).join() === want.join();
  });
}

/** Platform trades, own trades, platform trades; resolves with the last platform trade id. */
async function interleave(): Promise<string> {
  await publishPlatform(stack.nats.js, 2);
  await publishOwn(stack.http.url, keys.owner, 2);
  return publishPlatform(stack.nats.js, 2);
}

/** Cuts after the first own event: the positions it leaves (the last of each kind up to it). */
function cutAfterOwn(got: Item[]): { md: number; own: number; before: Item[] } {
  const at = got.findIndex((e) => e.own);
  expect(at).toBeGreaterThan(0);
  const before = got.slice(0, at + 1);
  return { md: seqs(before, false).at(-1) as number, own: (got[at] as Item).seq, before };
}

describe('gRPC StreamEvents', () => {
  it('marks own events and resumes both positions exactly', async () => {
    const first = await grpcRead(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(keys.owner)));
    const theirs = await grpcRead(client.StreamEvents({ coins: ['BTC'] }, keyMetadata(keys.other)));
    const last = await interleave();
    await eventually(() => has(first.got, last) && has(theirs.got, last), 15_000, 'the first batch');
    first.close();
    theirs.close();
    expect(seqs(theirs.got, true)).toEqual([]);
    const cut = cutAfterOwn(first.got);

    const resumed = await grpcRead(
      client.StreamEvents(
        { coins: ['BTC'], after_seq: cut.md, after_own_seq: cut.own },
        keyMetadata(keys.owner),
      ),
    );
    const again = await interleave();
    await eventually(() => has(resumed.got, again), 15_000, 'the resumed stream');
    resumed.close();
    const all = [...cut.before, ...resumed.got];
    for (const own of [false, true]) expect(increasing(seqs(all, own))).toBe(true);
    // Nothing lost: each stream's events after the cut come first (the two interleave as they arrive).
    expect(firstAfterCut(first.got, resumed.got, cut.before.length)).toBe(true);
    expect(seqs(resumed.got, true)).toHaveLength(3); // the first batch's second own event, then two
  });
});

describe('gRPC Stream (bidirectional)', () => {
  it('keeps both positions across a change of subscription', async () => {
    const call = client.Stream(keyMetadata(keys.owner));
    const reader = grpcRead(call as unknown as ClientReadableStream<Record<string, unknown>>);
    call.write({ open: { coins: ['BTC'] } });
    const r = await reader;
    const last = await interleave();
    await eventually(() => has(r.got, last), 15_000, 'the first batch');
    // A change re-positions the feed after both positions: nothing again, nothing missed.
    call.write({ subscribe: { coins: ['ETH'] } });
    const again = await interleave();
    await eventually(() => has(r.got, again), 15_000, 'after the change');
    r.close();
    for (const own of [false, true]) expect(increasing(seqs(r.got, own))).toBe(true);
    expect(seqs(r.got, true)).toHaveLength(4);
  });
});

describe('disk-sync', () => {
  const url = () => disk.address;
  const events = (c: ReturnType<typeof connectSync>): Item[] =>
    c.events
      .filter((e) => e.event_type === 'trade')
      .map((e) => ({ seq: e.seq, own: e.own === true, trade_id: String(e.trade_id) }));

  /**
   * Subscribes with `key` again right after its last connection closed: the edge frees that
   * connection's lease a moment after the close, and until then refuses the key (4008), as it would
   * any second connection. Retried while so (the TypeScript client does the same), 10 s at most.
   */
  async function subscribeAgain(key: string, msg: Record<string, unknown>) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const c = connectSync(url(), { key });
      c.send(msg);
      const outcome = await Promise.race([
        c.control('subscribed').then(
          () => 'subscribed' as const,
          () => 'no answer' as const,
        ),
        c.closed.then((x) => x.code),
      ]);
      if (outcome === 'subscribed') return c;
      if (outcome !== 4008 || Date.now() > deadline)
        throw new Error(`subscribe again: closed with ${outcome}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it('resumes both positions exactly with from_seq and from_own_seq', async () => {
    const first = connectSync(url(), { key: keys.owner });
    first.send({ op: 'subscribe', id: 's', coins: ['BTC'] });
    await first.control('subscribed');
    const last = await interleave();
    await eventually(() => has(events(first), last), 15_000, 'the first batch');
    await first.close();
    const cut = cutAfterOwn(events(first));

    const resumed = await subscribeAgain(keys.owner, {
      op: 'subscribe',
      id: 's',
      coins: ['BTC'],
      from_seq: cut.md,
      from_own_seq: cut.own,
    });
    const again = await interleave();
    await eventually(() => has(events(resumed), again), 15_000, 'the resumed subscription');
    await resumed.close();
    const got = events(resumed);
    const all = [...cut.before, ...got];
    for (const own of [false, true]) expect(increasing(seqs(all, own))).toBe(true);
    expect(firstAfterCut(events(first), got, cut.before.length)).toBe(true);
    expect(seqs(got, true)).toHaveLength(3);
  });

  it('refuses a malformed from_own_seq, and shows another account none of the own events', async () => {
    // A key of its own: one disk-sync connection per key, and the owner's last one may still hold its lease.
    const bad = connectSync(url(), { key: (await stack.accounts.key('quant')).key });
    bad.send({ op: 'subscribe', id: 's', coins: ['BTC'], from_seq: 1, from_own_seq: -1 });
    const err = await bad.control('error');
    expect(err).toMatchObject({ code: 'invalid_params' });
    await bad.close();
    const theirs = connectSync(url(), { key: keys.other });
    theirs.send({ op: 'subscribe', id: 's', coins: ['BTC'], from_seq: 1, from_own_seq: 0 });
    await theirs.control('subscribed');
    const last = await interleave();
    await eventually(() => has(events(theirs), last), 15_000, 'the other account');
    await theirs.close();
    expect(seqs(events(theirs), true)).toEqual([]);
  });
});
