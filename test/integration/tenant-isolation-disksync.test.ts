/**
 * An account's own `stream: true` events on disk-sync (issue 28), in both encodings: two
 * connections of different accounts open at once on one edge process with the same selection (one
 * subscription each: the case where connections share encoded chunks), live, resumed from the ring
 * (`from_seq`) and resumed from JetStream history. The owner receives exactly its own events, the
 * other account none of them. The scenario is test/support/tenant-isolation.ts; each reader is a
 * fresh key of its account (one disk-sync connection per key).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startDisksyncGateway } from '../../app/disksync-gateway.ts';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { acquireTail, type TailHold } from '../../app/shared-tail.ts';
import type { Encoding } from '../../contracts/disksync.ts';
import { createLogger } from '../../platform/logger.ts';
import type { SyncClient } from '../support/disksync.ts';
import { disksyncReader } from '../support/feed-readers.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import {
  isolationPhase,
  type OpenReader,
  type Phase,
  publishOwn,
  type ScenarioDeps,
  type Who,
} from '../support/tenant-isolation.ts';

const RING = 16;
let stack: TestStack;
let edge: { stop(): Promise<void> };
let guard: { part: { stop(): Promise<void> } };
let hold: TailHold;
let url: string;
const accountOf = { owner: '', other: '' };
const clients: SyncClient[] = [];
let deps: ScenarioDeps;

beforeAll(async () => {
  stack = await startStack({ SSE_RING_SIZE: String(RING) });
  const log = createLogger(stack.config.LOG_LEVEL, 'disksync');
  const parts = await startEdgeGuard(stack.nats, stack.config, log);
  guard = parts;
  const config = { ...stack.config, DISKSYNC_PORT_US: 0, HOST: '127.0.0.1' };
  const started = await startDisksyncGateway(stack.nats, config, log, 'us', parts);
  edge = started;
  url = started.address;
  hold = await acquireTail(stack.nats, stack.config, log);
  const owner = await stack.accounts.key('quant', { scopes: ['mcp', 'stream:read'] });
  accountOf.owner = owner.accountId;
  accountOf.other = (await stack.accounts.key('quant')).accountId;
  deps = {
    nats: stack.nats,
    ring: RING,
    tail: hold.tail,
    publishOwn: () => publishOwn(stack.http.url, owner.key),
  };
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  hold?.release();
  await edge?.stop();
  await guard?.part.stop();
  await stack?.close();
});

/** A new key of the account (one connection per key). */
const keyOf = async (who: Who) =>
  (await stack.accounts.service.createKey(accountOf[who], { name: `reader ${clients.length}`, scopes: [] }))
    .key;

const reader =
  (encoding: Encoding): OpenReader =>
  async (who, after) =>
    disksyncReader(url, await keyOf(who), after, encoding, clients, { coins: ['BTC'] });

const PHASES: Phase[] = ['live', 'ring', 'history'];

describe.each(['json', 'msgpack'] as const)("an account's own events on disk-sync (%s)", (encoding) => {
  it.each(PHASES)('reach only that account (%s)', async (phase) => {
    await isolationPhase(deps, reader(encoding), phase);
  });
});
