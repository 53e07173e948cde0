/**
 * Handover: a client resuming from far behind (beyond the ring, through a private JetStream
 * consumer) while events keep arriving reaches the live tail with no gap and no duplicate.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { replayStats } from '../../gateways/core/replay-source.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, type Outgoing, publishEvents } from '../../producers/publish.ts';
import { eventually } from '../support/eventually.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';
import { publishAtRate, trade } from '../support/publisher.ts';
import { openSse } from '../support/sse.ts';
import { lastSeq } from '../support/stored-seqs.ts';

let nats: TestNats;
let gw: TestGateway;

beforeAll(async () => {
  nats = await startTestNats();
  gw = await startTestGateway(nats.url, { SSE_RING_SIZE: '1024' });
});

afterAll(async () => {
  await gw?.close();
  await nats?.cleanup();
});

it('catches up 50,000 stored events and joins the live tail without gap or duplicate', async () => {
  const log = createLogger('silent');
  const history = 50_000;
  for (let i = 0; i < history; i += 1_000) {
    const batch: Outgoing[] = [];
    for (let j = i; j < i + 1_000; j++)
      batch.push({ event: trade(j % 2 ? 'BTC' : 'ETH', j), id: `hist.${j}`, ingestUs: nowUs() });
    await publishEvents(gw.nats.js, batch, log);
  }
  const live = publishAtRate(gw.nats.js, ['BTC', 'ETH'], 1_000);
  await eventually(() => live.published() >= 100, 10_000, '100 live events published');

  const ids: number[] = [];
  const fromStreamBefore = replayStats.fromStream;
  const stream = await openSse(`${gw.url}/api/v1/unified/stream`, (m) => m.id && ids.push(Number(m.id)), {
    'last-event-id': '0',
  });
  expect(stream.status).toBe(200);
  // Keep publishing while the client is on the catch-up consumer and through the handover.
  await eventually(
    () => (ids.at(-1) ?? 0) > history + 1_000,
    60_000,
    `the client past ${history + 1_000} (the live tail)`,
    20,
  );
  await live.stop();
  const last_seq = await lastSeq(gw.nats);
  await eventually(() => ids.at(-1) === last_seq, 20_000, `the client at the last sequence ${last_seq}`, 20);
  stream.abort();

  expect(replayStats.fromStream - fromStreamBefore).toBe(1);
  expect(last_seq).toBeGreaterThan(history + 1_000);
  expect(ids.length).toBe(last_seq);
  expect(ids.every((id, i) => id === i + 1)).toBe(true);
});
