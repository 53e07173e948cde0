/** feed_stale: a coin silent for longer than the threshold is reported (non-terminal), then its recovery. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url, { COINS: 'BTC,ETH', SSE_FEED_STALE_MS: '300' });
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

const until = async (cond: () => boolean) => {
  while (!cond()) await new Promise((r) => setTimeout(r, 10));
};

it('reports a silent coin as feed_stale, keeps the stream open, and reports recovery', async () => {
  const got: SseMessage[] = [];
  const s = await openSse(`${gw.url}/api/v1/unified/stream?coin=ETH`, (m) => got.push(m));
  const btcOnly = publishAtRate(gw.nats.js, ['BTC'], 200);
  await until(() => got.some((m) => m.event === 'error'));
  await btcOnly.stop();
  const eth = publishAtRate(gw.nats.js, ['ETH'], 200);
  await until(() => got.some((m) => m.event === 'message'));
  await eth.stop();
  s.abort();

  const stale = JSON.parse(got.find((m) => m.event === 'error')?.data ?? '{}');
  expect(stale).toMatchObject({ code: 'feed_stale', terminal: false, coin: 'ETH' });
  expect(stale.request_id).toMatch(/^req_/);
  const recovered = got.findIndex(
    (m) => m.event === 'notice' && JSON.parse(m.data).code === 'feed_recovered',
  );
  const firstEvent = got.findIndex((m) => m.event === 'message');
  expect(recovered).toBeGreaterThan(0);
  expect(recovered).toBeLessThan(firstEvent);
  expect(got.filter((m) => m.event === 'error').every((m) => JSON.parse(m.data).coin === 'ETH')).toBe(true);
});
