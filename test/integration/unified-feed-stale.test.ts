/**
 * feed_stale is per coin, not per connection: on a stream of BTC and ETH where only BTC keeps
 * flowing, BTC events go on, exactly one non-terminal `feed_stale` names ETH (none names BTC), no
 * earlier than the threshold after ETH's last event, and ETH's return is announced as
 * `feed_recovered` before its first event. (Coins already stale when the client connects are
 * reported on connect or at the next check; that initial state, before both coins flow, is not counted.)
 * And per source: of two sources publishing SOL, the one gone silent is reported (naming its
 * source) while the other keeps publishing SOL, and only to streams that take that source.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

const STALE_MS = 300;
let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url, { COINS: 'BTC,ETH', SSE_FEED_STALE_MS: String(STALE_MS) });
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

/** Polls `cond` every 10 ms; fails naming `what` after `ms`. */
async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Received = SseMessage & { at: number; body: Record<string, unknown> };

it('reports only the silent coin, once, after the threshold, while the other flows; then its recovery', async () => {
  const got: Received[] = [];
  const s = await openSse(`${gw.url}/api/v1/unified/stream?coin=BTC,ETH`, (m) =>
    got.push({ ...m, at: Date.now(), body: JSON.parse(m.data) }),
  );
  const isEvent = (m: Received, coin: string) => m.event === 'message' && m.body.symbol === coin;
  // Reports from before both coins flowed are the initial state, not this test's subject: a
  // gateway idle past the threshold reports every expected coin stale, on connect or at its next
  // check, which can fall after BTC's first event and before ETH's. Count from the first event
  // after both have had one.
  const flowing = () => {
    const firsts = ['BTC', 'ETH'].map((coin) => got.findIndex((m) => isEvent(m, coin)));
    return firsts.includes(-1) ? [] : got.slice(Math.max(...firsts));
  };
  const stales = () => flowing().filter((m) => m.event === 'error' && m.body.code === 'feed_stale');

  const btc = publishAtRate(gw.nats.js, ['BTC'], 200);
  const eth = publishAtRate(gw.nats.js, ['ETH'], 200);
  await until('an ETH event', () => got.some((m) => isEvent(m, 'ETH')));
  await eth.stop();
  await until('feed_stale', () => stales().length > 0);
  const staleAt = stales()[0]?.at as number;
  // Twice the threshold more of BTC: no second report, and BTC kept flowing after the report.
  await until('BTC after the report', () =>
    got.some((m) => isEvent(m, 'BTC') && m.at > staleAt + 2 * STALE_MS),
  );
  await btc.stop();

  const lastEthAt = Math.max(...got.filter((m) => isEvent(m, 'ETH')).map((m) => m.at));
  expect(stales().map((m) => m.body)).toMatchObject([{ code: 'feed_stale', terminal: false, coin: 'ETH' }]);
  expect(String(stales()[0]?.body.request_id)).toMatch(/^req_/);
  expect(staleAt - lastEthAt).toBeGreaterThanOrEqual(STALE_MS);
  expect(flowing().some((m) => m.event === 'error' && m.body.coin === 'BTC')).toBe(false);

  const before = got.length;
  const back = publishAtRate(gw.nats.js, ['ETH'], 200);
  await until('ETH again', () => got.slice(before).some((m) => isEvent(m, 'ETH')));
  await back.stop();
  s.abort();
  const after = got.slice(before);
  const recovered = after.findIndex((m) => m.event === 'notice' && m.body.code === 'feed_recovered');
  expect(recovered).toBeGreaterThanOrEqual(0);
  expect(after[recovered]?.body).toMatchObject({ coin: 'ETH' });
  expect(recovered).toBeLessThan(after.findIndex((m) => isEvent(m, 'ETH')));
});

it('reports a silent source of a coin while another source keeps publishing it, to streams taking that source', async () => {
  const synthetic = publishAtRate(gw.nats.js, ['SOL'], 200);
  let hyperliquid = publishAtRate(gw.nats.js, ['SOL'], 200, { source: 'hyperliquid' });
  await eventually(async () => gw.tail.health.knows('SOL'), 10_000, 'SOL known');
  const all: Received[] = [];
  const onlySynthetic: Received[] = [];
  const record = (into: Received[]) => (m: SseMessage) =>
    into.push({ ...m, at: Date.now(), body: JSON.parse(m.data) });
  const a = await openSse(`${gw.url}/api/v1/unified/stream?coin=SOL`, record(all));
  const b = await openSse(`${gw.url}/api/v1/unified/stream?coin=SOL&source=synthetic`, record(onlySynthetic));
  const isEvent = (m: Received, source: string) => m.event === 'message' && m.body.source === source;
  const stales = (got: Received[]) => got.filter((m) => m.event === 'error' && m.body.code === 'feed_stale');

  await until('a hyperliquid SOL event', () => all.some((m) => isEvent(m, 'hyperliquid')));
  await hyperliquid.stop();
  await until('feed_stale', () => stales(all).length > 0);
  const staleAt = stales(all)[0]?.at as number;
  await until('synthetic SOL after the report', () =>
    all.some((m) => isEvent(m, 'synthetic') && m.at > staleAt + 2 * STALE_MS),
  );
  expect(stales(all)).toHaveLength(1);
  expect(stales(all)[0]?.body).toMatchObject({
    code: 'feed_stale',
    coin: 'SOL',
    source: 'hyperliquid',
    terminal: false,
  });
  expect(stales(onlySynthetic)).toEqual([]);
  expect(onlySynthetic.some((m) => isEvent(m, 'synthetic') && m.at > staleAt)).toBe(true);

  const before = all.length;
  hyperliquid = publishAtRate(gw.nats.js, ['SOL'], 200, { source: 'hyperliquid' });
  await until('hyperliquid SOL again', () => all.slice(before).some((m) => isEvent(m, 'hyperliquid')));
  await hyperliquid.stop();
  await synthetic.stop();
  a.abort();
  b.abort();
  const after = all.slice(before);
  const recovered = after.findIndex((m) => m.event === 'notice' && m.body.code === 'feed_recovered');
  expect(after[recovered]?.body).toMatchObject({ coin: 'SOL', source: 'hyperliquid' });
  expect(recovered).toBeLessThan(after.findIndex((m) => isEvent(m, 'hyperliquid')));
  expect(onlySynthetic.some((m) => m.event === 'notice' && m.body.code === 'feed_recovered')).toBe(false);
});
