/**
 * The TypeScript stream client on a stream that carries the account's own events: the account
 * publishes own events (POST /mcp/normalize with `stream: true`, stored on `OWN`) between
 * platform events (`MD`), and the client's SSE connection is cut again and again through a relay
 * (and the link held down for a while). The client keeps two positions, resumes with
 * `Last-Event-ID: N:K`, and yields every platform sequence and every own sequence exactly once,
 * in order; a position it saved starts another iterator where the first one stopped.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { isOwn, stream } from '../../clients/typescript/src/index.ts';
import type { ResumePosition, StreamItem } from '../../clients/typescript/src/stream-types.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { type CutProxy, startCutProxy } from '../support/cut-proxy.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { trade } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let stack: TestStack;
let gw: TestGateway;
let proxy: CutProxy;
let key = '';

beforeAll(async () => {
  stack = await startStack();
  gw = await startTestGateway(stack.server.url, { SSE_RETRY_MS: '50' }, { guard: 'keys' });
  proxy = await startCutProxy(gw.url);
  key = (await stack.accounts.key('pro', { scopes: ['mcp', 'stream:read'] })).key;
});

afterAll(async () => {
  await proxy?.close();
  await gw?.close();
  await stack?.close();
});

let ownTrade = 0;
/** `n` own events of the account in one normalize call (Binance BTCUSDT trades, unique ids). */
async function publishOwn(n: number): Promise<void> {
  const events = Array.from({ length: n }, () => {
    ownTrade++;
    const payload = { e: 'trade', s: 'BTCUSDT', t: ownTrade, p: '1.00', q: '0.5', T: Date.now(), m: false };
    return { payload };
  });
  const res = await fetch(`${stack.http.url}/mcp/normalize`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'binance', events, stream: true }),
  });
  expect(await res.json()).toMatchObject({ published: n });
}

let platformTrade = 0;
async function publishPlatform(n: number): Promise<void> {
  const batch = Array.from({ length: n }, () => {
    platformTrade++;
    return {
      event: trade('BTC', 3_000_000 + platformTrade),
      id: `own-client.${platformTrade}`,
      ingestUs: nowUs(),
    };
  });
  await publishEvents(stack.nats.js, batch, createLogger('silent'));
}

type Collected = { platform: number[]; own: number[]; items: StreamItem[]; done: Promise<unknown> };

function collect(s: AsyncIterable<StreamItem>): Collected {
  const c: Collected = { platform: [], own: [], items: [], done: Promise.resolve() };
  c.done = (async () => {
    for await (const item of s) {
      c.items.push(item);
      if (item.type === 'event') (isOwn(item.event) ? c.own : c.platform).push(item.seq);
    }
  })().catch((err) => err);
  return c;
}

const range = (after: number, last: number) => Array.from({ length: last - after }, (_, i) => after + 1 + i);
const reconnects = (c: Collected) => c.items.filter((i) => i.type === 'reconnecting').length;

it('yields every platform and every own sequence exactly once across cut connections', async () => {
  await publishPlatform(1);
  const from = await lastSeq(stack.nats);
  const ownFrom = await lastSeq(stack.nats, STREAMS.OWN);
  const s = stream({ url: proxy.url, key, from, random: () => 0.5 });
  const c = collect(s);

  for (let round = 0; round < 8; round++) {
    // Own and platform events interleaved; the own ones often last, so a cut follows an own event.
    await publishPlatform(3);
    await publishOwn(1 + (round % 3));
    if (round % 2 === 1) await publishPlatform(2);
    const wantOwn = (await lastSeq(stack.nats, STREAMS.OWN)) - ownFrom;
    const wantPlatform = (await lastSeq(stack.nats)) - from;
    await eventually(
      () => c.own.length >= wantOwn && c.platform.length >= wantPlatform,
      20_000,
      `round ${round}: every event so far`,
      5,
    );
    const before = reconnects(c);
    if (round === 5) {
      // The link is down for a while: events published meanwhile come after it, once.
      proxy.hold();
      await publishOwn(2);
      await publishPlatform(4);
      await eventually(() => reconnects(c) >= before + 2, 20_000, 'attempts while the link is down', 5);
      proxy.restore();
    } else {
      await eventually(
        async () => {
          if (reconnects(c) > before) return true;
          proxy.cut();
          await new Promise((r) => setTimeout(r, 100));
          return reconnects(c) > before;
        },
        20_000,
        `cut ${round}: the client reconnects`,
      );
    }
  }
  await publishOwn(1);
  await publishPlatform(1);
  const lastOwn = await lastSeq(stack.nats, STREAMS.OWN);
  const lastPlatform = await lastSeq(stack.nats);
  await eventually(
    () => c.own.at(-1) === lastOwn && c.platform.at(-1) === lastPlatform,
    20_000,
    'the last events',
    5,
  );
  const saved = s.resumePosition() as ResumePosition;
  s.close();
  expect(await c.done).toBeUndefined();

  expect(c.platform).toEqual(range(from, lastPlatform));
  expect(c.own).toEqual(range(ownFrom, lastOwn));
  expect(c.own.length).toBeGreaterThan(15);
  expect(reconnects(c)).toBeGreaterThanOrEqual(8);
  expect(saved).toEqual({ seq: lastPlatform, own_seq: lastOwn });

  // The saved pair starts another iterator: only what came after, of each kind.
  await publishOwn(2);
  await publishPlatform(2);
  const next = stream({ url: proxy.url, key, from: saved, random: () => 0.5 });
  const c2 = collect(next);
  const endOwn = await lastSeq(stack.nats, STREAMS.OWN);
  const endPlatform = await lastSeq(stack.nats);
  await eventually(
    () => c2.own.at(-1) === endOwn && c2.platform.at(-1) === endPlatform,
    20_000,
    'the saved position resumed',
    5,
  );
  next.close();
  await c2.done;
  expect(c2.own).toEqual(range(lastOwn, endOwn));
  expect(c2.platform).toEqual(range(lastPlatform, endPlatform));
});
