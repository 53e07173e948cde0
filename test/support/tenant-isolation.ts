/**
 * The tenant-isolation scenario every transport runs (issue 28): two accounts read the same
 * selection while one of them, the owner, publishes its own events with `stream: true`
 * (POST /mcp/normalize → `md.hyperliquid.BTC.trade.<account>`: a forged print on a coin the platform
 * tracks, at 1.00) and the platform publishes synthetic BTC trades. Three ways in: live, resumed
 * from the edge's ring (recent in-memory history), resumed from JetStream history (older than the
 * ring). The owner receives exactly its own events, the other account none of them, and both the
 * same platform events.
 *
 * A transport supplies `open(who, after)`: a reader attached to the feed once it resolves (`after`
 * null: live only), collecting every event it receives; `poll` for readers that must ask (JSON-RPC
 * filters).
 */
import { randomInt } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import { expect } from 'vitest';
import type { LiveTail } from '../../gateways/core/live-tail.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { eventually } from './eventually.ts';
import { trade } from './publisher.ts';
import { lastSeq } from './stored-seqs.ts';

export type FeedItem = { seq: number; source: string; symbol: string; trade_id?: string };

export type Reader = {
  got: FeedItem[];
  /** Asks the edge for what came since the last call (polling transports). */
  poll?(): Promise<void>;
  close(): Promise<void> | void;
};

export type Who = 'owner' | 'other';
export type OpenReader = (who: Who, after: number | null) => Promise<Reader>;
export type Phase = 'live' | 'ring' | 'history';

/** The owner's forged print: a Hyperliquid BTC trade at 1.00, unique per call (trade ids returned). */
let tid = randomInt(1_000_000_000);
export async function publishOwn(httpUrl: string, key: string, n = 2): Promise<string[]> {
  const fills = Array.from({ length: n }, () => {
    tid++;
    return { coin: 'BTC', side: 'B', px: '1.00', sz: '0.5', time: Date.now(), tid };
  });
  const res = await fetch(`${httpUrl}/mcp/normalize`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      source: 'hyperliquid',
      events: [{ payload: { channel: 'trades', data: fills } }],
      stream: true,
    }),
  });
  expect(await res.json()).toMatchObject({ published: n });
  return fills.map((f) => `trd_${f.tid}`);
}

let sentinel = randomInt(1_000_000_000);
/** `n` platform trades (synthetic `coin`, stamped now); resolves with the last one's trade id. */
export async function publishPlatform(
  js: JetStreamClient,
  n: number,
  opts: { coin?: string; source?: 'synthetic' | 'hyperliquid' } = {},
): Promise<string> {
  const coin = opts.coin ?? 'BTC';
  const batch = Array.from({ length: n }, () => {
    sentinel++;
    const event = { ...trade(coin, sentinel), timestamp_ms: Date.now(), source: opts.source ?? 'synthetic' };
    return { event, id: `platform.${sentinel}`, ingestUs: nowUs() };
  });
  await publishEvents(js, batch, createLogger('silent'));
  return `trd_${coin}_${sentinel}`;
}

/** Until every reader has the platform event `tradeId` (polling readers are asked meanwhile); then closes them. */
export async function until(readers: Reader[], tradeId: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    for (const r of readers) await r.poll?.();
    if (readers.every((r) => r.got.some((e) => e.trade_id === tradeId))) break;
    if (Date.now() > deadline) throw new Error(`platform event ${tradeId} did not arrive`);
    await new Promise((r) => setTimeout(r, 10));
  }
  for (const r of readers) await r.close();
}

/** The owner's forged events among what a reader received. */
export const ownIn = (r: Reader): FeedItem[] => r.got.filter((e) => e.source === 'hyperliquid');

export type ScenarioDeps = {
  nats: Nats;
  /** Publishes the owner's own events; resolves with their trade ids. */
  publishOwn(): Promise<string[]>;
  /** The edge's ring size: history is resumed from further back than it. */
  ring: number;
  /**
   * The edge's live tail, when the test can see it: a resumed reader opens once the tail has the
   * events, and the phase checks that its ring does (ring) or does not (history) cover them.
   */
  tail?: Pick<LiveTail, 'lastSeq' | 'coveredFrom'>;
  /** False where the owner's reader is not its own account's (the dashboard proxy): only isolation is checked. */
  ownerSeesOwn?: boolean;
};

/**
 * One phase for one transport. Returns the two readers (checked already): the owner's received its
 * own events exactly, the other's none, and both the same platform events.
 */
export async function isolationPhase(
  deps: ScenarioDeps,
  open: OpenReader,
  phase: Phase,
): Promise<{ mine: Reader; theirs: Reader }> {
  let mine: Reader;
  let theirs: Reader;
  let own: string[];
  let last: string;
  if (phase === 'live') {
    mine = await open('owner', null);
    theirs = await open('other', null);
    own = await deps.publishOwn();
    last = await publishPlatform(deps.nats.js, 1);
  } else {
    const from = await lastSeq(deps.nats);
    own = await deps.publishOwn();
    last = await publishPlatform(deps.nats.js, phase === 'ring' ? 1 : deps.ring * 3);
    // Resumed readers start after `from`: the owner's events are behind them in the stream.
    if (deps.tail) {
      const tail = deps.tail;
      const end = await lastSeq(deps.nats);
      await eventually(() => tail.lastSeq >= end, 10_000, `the edge's tail at ${end}`, 5);
      if (phase === 'ring') expect(tail.coveredFrom).toBeLessThanOrEqual(from + 1);
      else expect(tail.coveredFrom).toBeGreaterThan(from + own.length);
    }
    mine = await open('owner', from);
    theirs = await open('other', from);
  }
  await until([mine, theirs], last);
  if (deps.ownerSeesOwn !== false) {
    expect(ownIn(mine).map((e) => e.trade_id)).toEqual(own);
    expect(ownIn(mine).every((e) => e.symbol === 'BTC')).toBe(true);
  }
  expect(ownIn(theirs)).toEqual([]);
  expect(theirs.got.map((e) => e.seq)).toEqual(
    mine.got.filter((e) => e.source !== 'hyperliquid').map((e) => e.seq),
  );
  expect(theirs.got.length).toBeGreaterThan(0);
  return { mine, theirs };
}
