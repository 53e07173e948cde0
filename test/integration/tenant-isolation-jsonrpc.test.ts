/**
 * An account's own `stream: true` events on the JSON-RPC edge (issue 28):
 * - polling filters (`md_newFilter` / `md_getFilterChanges`) installed before the events (read from
 *   the ring), or from a `last_event_id` the ring covers, or one older than it (JetStream): the
 *   owner's filter returns exactly its own events, another account's filter on the same selection
 *   none of them;
 * - `md_trades` of the coin the owner forged a print on: the owner's answer has its trades (read
 *   from `OWN`, marked `own`), the other account's answer the same platform trades and none of the
 *   owner's;
 * - `md_coins`: an account's own events are not the platform's, so no account sees the source they
 *   came as (Hyperliquid) listed for the coin.
 * The scenario is test/support/tenant-isolation.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { filterReader, rpcResult } from '../support/feed-readers.ts';
import { startTestJsonRpc, type TestJsonRpc } from '../support/jsonrpc.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';
import {
  type FeedItem,
  isolationPhase,
  type OpenReader,
  type Phase,
  publishOwn,
  publishPlatform,
  type ScenarioDeps,
} from '../support/tenant-isolation.ts';

const RING = 16;
let stack: TestStack;
let edge: TestJsonRpc;
const keys = { owner: '', other: '' };
let deps: ScenarioDeps;

beforeAll(async () => {
  stack = await startStack({ SSE_RING_SIZE: String(RING) });
  edge = await startTestJsonRpc(stack.nats, stack.config, { guard: 'keys' });
  keys.owner = (await stack.accounts.key('pro', { scopes: ['mcp', 'stream:read'] })).key;
  keys.other = (await stack.accounts.key('quant')).key;
  deps = {
    nats: stack.nats,
    ring: RING,
    tail: edge.tail,
    publishOwn: () => publishOwn(stack.http.url, keys.owner),
  };
}, 60_000);

afterAll(async () => {
  await edge?.close();
  await stack?.close();
});

const result = (key: string, method: string, params: unknown) => rpcResult(edge.url, key, method, params);
const filters: OpenReader = (who, after) => filterReader(edge.url, keys[who], after, { coins: ['BTC'] });

describe("an account's own events on JSON-RPC filters", () => {
  it.each(['live', 'ring', 'history'] as Phase[])('reach only that account (%s)', async (phase) => {
    await isolationPhase(deps, filters, phase);
  });
});

type Trades = { coin: string; truncated: boolean; trades: FeedItem[] };

describe("an account's own events in md_trades and md_coins", () => {
  it('md_trades answers the owner its own trades and another account none of them', async () => {
    const start = Date.now();
    const own = await publishOwn(stack.http.url, keys.owner);
    await publishPlatform(stack.nats.js, 3);
    const end = Date.now();
    const trades = async (key: string) => (await result(key, 'md_trades', ['BTC', start, end])) as Trades;
    const mine = await trades(keys.owner);
    const theirs = await trades(keys.other);
    expect(mine.truncated).toBe(false);
    expect(mine.trades.filter((t) => t.source === 'hyperliquid').map((t) => t.trade_id)).toEqual(own);
    // Read from `OWN`: marked `own` (their `seq` is OWN's), the platform's not.
    expect(mine.trades.map((t) => (t as { own?: boolean }).own === true)).toEqual(
      mine.trades.map((t) => t.source === 'hyperliquid'),
    );
    expect(theirs.trades.filter((t) => t.source === 'hyperliquid')).toEqual([]);
    expect(theirs.trades.map((t) => t.seq)).toEqual(
      mine.trades.filter((t) => t.source !== 'hyperliquid').map((t) => t.seq),
    );
    expect(theirs.trades).toHaveLength(3);
  });

  it("md_coins never lists an account's own source for a coin, to any account", async () => {
    await publishOwn(stack.http.url, keys.owner);
    const last = await publishPlatform(stack.nats.js, 1);
    const stored = await lastSeq(stack.nats);
    await eventually(() => edge.tail.lastSeq >= stored, 10_000, "the edge's tail at the last event");
    for (const key of [keys.owner, keys.other]) {
      const coins = (await result(key, 'md_coins', [])) as { coin: string; sources: { source: string }[] }[];
      expect(
        coins.find((c) => c.coin === 'BTC')?.sources.map((s) => s.source),
        last,
      ).toEqual(['synthetic']);
    }
  });
});
