/**
 * The soak's slow gRPC client (bench/soak-slow.ts `slowGrpc`) holds the edge back, so the edge ends
 * it, and it resumes exactly; a grpc-js call paused before its first read does not. grpc-js pauses a
 * call's HTTP/2 stream only when it hands a message to the call's Readable, which happens once a
 * read has started: paused before any read, it queues every frame itself and keeps opening the
 * window, so the edge never sees backpressure (the soak's slow client was never ended that way).
 * Two in-process edges on one nats-server: `slowGrpc` on one, the paused-before-reading call on the
 * other, while events are published in batches (each once the edges have the previous one) until
 * the edge of `slowGrpc` has ended it. Then: `slowGrpc` got UNAVAILABLE `reconnect` once it read
 * again, its events were in order, and `after_seq` = its last sequence went on from the next one
 * with no gap; the other edge still streams to its never-reading client.
 */
import type { ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { acquireTail, type TailHold } from '../../app/shared-tail.ts';
import { slowGrpc } from '../../bench/soak-slow.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { keyMetadata, type PriceClient } from '../support/grpc.ts';
import { type InProcessGrpc, ownConnectionClient, startInProcessGrpc } from '../support/grpc-edge.ts';
import { book, publishNow, trade } from '../support/publisher.ts';
import { type BaseStack, startBase } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';

const MAX_BACKLOG = 64 * 1024;
/**
 * How long `slowGrpc` stops reading: longer than publishing until its edge ends it can take (a dozen
 * batches of 200, about two seconds on the two-core machine; five times that is allowed).
 */
const PAUSE_MS = 12_000;
const PUBLISH_FOR_MS = 10_000;
const config = testConfig({ SSE_MAX_BACKLOG_BYTES: String(MAX_BACKLOG), SSE_CLOSE_GRACE_MS: '120000' });
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let slowEdge: InProcessGrpc;
let otherEdge: InProcessGrpc;
let tail: TailHold;
const clients: PriceClient[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ nats, accounts } = base);
  [slowEdge, otherEdge] = await Promise.all([
    startInProcessGrpc(nats, config),
    startInProcessGrpc(nats, config),
  ]);
  tail = await acquireTail(nats, config, createLogger('silent'));
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await slowEdge?.close();
  await otherEdge?.close();
  tail?.release();
  await base?.close();
});

/** Publishes books and trades in batches of 200 until `done()`, within PUBLISH_FOR_MS; the batches published. */
async function publishUntil(done: () => boolean): Promise<number> {
  const deadline = Date.now() + PUBLISH_FOR_MS;
  let i = 0;
  for (; !done(); i += 200) {
    if (Date.now() > deadline) throw new Error(`not ended after ${i} events`);
    const events = Array.from({ length: 200 }, (_, k) => {
      const n = i + k;
      return n % 4 === 0 ? book(n % 8 < 4 ? 'BTC' : 'ETH', n, 10) : trade(n % 2 ? 'ETH' : 'BTC', n);
    });
    await publishNow(nats.js, events);
    const published = await lastSeq(nats);
    await eventually(() => tail.tail.lastSeq >= published, 20_000, `the tail reaching ${published}`);
  }
  return i / 200;
}

it('the soak’s slow gRPC client is ended by the edge and resumes exactly; one paused before reading is not', {
  timeout: 90_000,
}, async () => {
  const { key } = await accounts.key('quant');
  const slow = slowGrpc(slowEdge.target, key, PAUSE_MS);
  const client = ownConnectionClient(otherEdge.target);
  clients.push(client);
  const unread = client.StreamEvents({}, keyMetadata((await accounts.key('quant')).key));
  unread.pause();
  let unreadEnded = false;
  unread.on('data', () => {});
  unread.on('error', (_err: ServiceError) => {
    unreadEnded = true;
  });
  await eventually(
    () => slowEdge.app.registry.size === 1 && otherEdge.app.registry.size === 1,
    10_000,
    'both streams registered',
  );
  const batches = await publishUntil(() => slowEdge.app.registry.size === 0);
  const result = await slow;
  console.log(JSON.stringify({ batches, result }));
  expect(result).toMatchObject({ ended_by_server: true, how: 'status 14 reconnect', in_order: true });
  expect(result.received_events).toBeGreaterThan(0);
  expect(result.resumed).toMatchObject({ exact: true });
  expect(result.resumed?.first).toBe((result.resumed?.after_seq as number) + 1);
  // The call paused before reading held nothing back: its edge streams to it still.
  expect(otherEdge.app.registry.size).toBe(1);
  expect(unreadEnded).toBe(false);
  unread.cancel();
});
