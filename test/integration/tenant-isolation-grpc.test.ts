/**
 * An account's own `stream: true` events on the gRPC edge (issue 28): on `StreamEvents` and on the
 * bidirectional `Stream` (opened, and after a `subscribe` that re-positions its feed), live, resumed
 * from the ring and resumed from JetStream history, the owner's key receives exactly its events and
 * another account's key, reading the same selection on the same edge at the same time (streams of
 * one selection share encoded chunks), none of them. The scenario is test/support/tenant-isolation.ts.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { acquireTail, type TailHold } from '../../app/shared-tail.ts';
import { createLogger } from '../../platform/logger.ts';
import { bidiReader, bidiSubscribedReader, streamEventsReader } from '../support/feed-readers.ts';
import { type PriceClient, priceClient, startTestGrpc, type TestGrpc } from '../support/grpc.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import {
  isolationPhase,
  type OpenReader,
  type Phase,
  publishOwn,
  type ScenarioDeps,
} from '../support/tenant-isolation.ts';

const RING = 16;
let stack: TestStack;
let edge: TestGrpc;
let client: PriceClient;
let hold: TailHold;
const keys = { owner: '', other: '' };
let deps: ScenarioDeps;

beforeAll(async () => {
  stack = await startStack({ SSE_RING_SIZE: String(RING) });
  edge = await startTestGrpc(stack.nats, stack.config);
  // The edge's own tail (one per NATS connection and process): the scenario waits on it.
  hold = await acquireTail(stack.nats, stack.config, createLogger('silent'));
  client = priceClient(edge.target);
  keys.owner = (await stack.accounts.key('pro', { scopes: ['mcp', 'stream:read'] })).key;
  keys.other = (await stack.accounts.key('quant')).key;
  deps = {
    nats: stack.nats,
    ring: RING,
    tail: hold.tail,
    publishOwn: () => publishOwn(stack.http.url, keys.owner),
  };
}, 60_000);

afterAll(async () => {
  client?.close();
  hold?.release();
  await edge?.close();
  await stack?.close();
});

const BTC = { coins: ['BTC'] };
const readers: { name: string; open: OpenReader }[] = [
  { name: 'StreamEvents', open: (who, after) => streamEventsReader(client, keys[who], after, BTC) },
  { name: 'Stream (bidirectional)', open: (who, after) => bidiReader(client, keys[who], after, BTC) },
  {
    name: 'Stream after subscribe',
    open: (who, after) => bidiSubscribedReader(client, keys[who], after, { coins: ['ETH'] }, BTC),
  },
];

describe.each(readers)("an account's own events on gRPC $name", ({ open }) => {
  it.each(['live', 'ring', 'history'] as Phase[])('reach only that account (%s)', async (phase) => {
    await isolationPhase(deps, open, phase);
  });
});
