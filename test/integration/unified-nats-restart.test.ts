/**
 * NATS crash: kill -9 the nats-server mid-stream, restart it on the same port and store. The
 * gateway answers 503 on /healthz meanwhile, recovers by itself, and clients (one that stays
 * connected, one that reconnects after the outage) end with every sequence exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { STREAMS } from '../../contracts/streams.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';

let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url);
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const health = async () => (await fetch(`${gw.url}/healthz`)).status;
const collector = (ids: number[]) => (m: SseMessage) => {
  if (m.id) ids.push(Number(m.id));
};

it('recovers from a nats-server crash with no gap and no duplicate', async () => {
  const url = `${gw.url}/api/v1/unified/stream`;
  expect(await health()).toBe(200);
  const staying: number[] = [];
  const leaving: number[] = [];
  const a = await openSse(url, collector(staying));
  let b = await openSse(url, collector(leaving));
  const publisher = publishAtRate(gw.nats.js, ['BTC', 'ETH'], 500);
  await sleep(1_000);

  await nats.kill('SIGKILL');
  b.abort();
  const healthWhileDown = await health();
  const resumeWhileDown = await fetch(url, { headers: { 'last-event-id': String(leaving.at(-1) ?? 0) } });
  await sleep(500);
  nats = await nats.crashAndRestart();

  const deadline = Date.now() + 20_000;
  while ((await health()) !== 200 && Date.now() < deadline) await sleep(100);
  expect(await health()).toBe(200);
  b = await openSse(url, collector(leaving), { 'last-event-id': String(leaving.at(-1) ?? 0) });
  expect(b.status).toBe(200);
  await sleep(1_500);
  await publisher.stop();
  const { last_seq } = (await gw.nats.jsm.streams.info(STREAMS.MD)).state;
  while ((staying.at(-1) !== last_seq || leaving.at(-1) !== last_seq) && Date.now() < deadline + 10_000)
    await sleep(20);
  a.abort();
  b.abort();

  expect(healthWhileDown).toBe(503);
  expect(resumeWhileDown.status).toBe(503);
  expect((await resumeWhileDown.json()).error).toBe('feed_unavailable');
  expect(last_seq).toBeGreaterThan(1_000);
  const everySeq = Array.from({ length: last_seq }, (_, i) => i + 1);
  expect(staying).toEqual(everySeq);
  expect(leaving).toEqual(everySeq);
});
