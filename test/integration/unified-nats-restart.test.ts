/**
 * NATS crash: kill -9 the nats-server mid-stream, restart it on the same port and store. The
 * gateway answers 503 on /healthz meanwhile, recovers by itself, and clients (one that stays
 * connected, one that reconnects after the outage) end with every sequence exactly once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate } from '../support/publisher.ts';
import { openSse, type SseMessage } from '../support/sse.ts';
import { lastSeq } from '../support/stored-seqs.ts';

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
  await eventually(
    () => staying.length >= 300 && leaving.length >= 300,
    20_000,
    '300 events on both streams',
  );

  await nats.kill('SIGKILL');
  b.abort();
  // The gateway notices the outage on its own schedule: sample until it answers 503.
  await eventually(async () => (await health()) === 503, 10_000, '/healthz 503 while NATS is down', 50);
  const resumeWhileDown = await eventually(
    async () => {
      const res = await fetch(url, { headers: { 'last-event-id': String(leaving.at(-1) ?? 0) } });
      if (res.status === 503) return res;
      await res.body?.cancel();
      return null;
    },
    10_000,
    'a resume request answered 503 while NATS is down',
    50,
  );
  await expectError(resumeWhileDown, 503, 'feed_unavailable');
  nats = await nats.crashAndRestart();

  await eventually(async () => (await health()) === 200, 20_000, '/healthz 200 after the restart', 100);
  b = await openSse(url, collector(leaving), { 'last-event-id': String(leaving.at(-1) ?? 0) });
  expect(b.status).toBe(200);
  // Both clients go on receiving what is published after the restart.
  const restartedAt = await lastSeq(gw.nats);
  await eventually(
    () => Math.min(staying.at(-1) ?? 0, leaving.at(-1) ?? 0) >= restartedAt + 500,
    20_000,
    'both clients 500 events past the restart',
  );
  await publisher.stop();
  const last_seq = await lastSeq(gw.nats);
  await eventually(
    () => staying.at(-1) === last_seq && leaving.at(-1) === last_seq,
    20_000,
    `both clients at the last sequence ${last_seq}`,
    20,
  );
  a.abort();
  b.abort();

  expect(last_seq).toBeGreaterThan(1_000);
  const everySeq = Array.from({ length: last_seq }, (_, i) => i + 1);
  expect(staying).toEqual(everySeq);
  expect(leaving).toEqual(everySeq);
});
