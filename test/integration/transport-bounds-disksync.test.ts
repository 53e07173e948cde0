/**
 * What a disk-sync client can make the edge hold while its connection is being admitted, with the
 * real `ws` client on a private nats-server. The test's guard holds admission until the test lets
 * it go (then admits as the open guard does), so every message sent meanwhile waits:
 * - 16 messages wait and are answered, in order, once admitted;
 * - a 17th is refused at once, while admission is still held: `error` rate_limited and close 4029
 *   (before, every message waited, without limit, for as long as admission took);
 * - so are more than 1 MiB of waiting messages, however few.
 * Also: a subscribe of 101 coins is refused with 4005 (invalid_params).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DISKSYNC_EARLY_MAX_BYTES,
  DISKSYNC_EARLY_MAX_MESSAGES,
  MAX_COINS_PER_SUBSCRIPTION,
} from '../../contracts/transport-limits.ts';
import { type Guard, openGuard } from '../../gateways/core/guard.ts';
import { LiveTail } from '../../gateways/core/live-tail.ts';
import { buildDisksyncApp, type DisksyncApp, disksyncSettings } from '../../gateways/disksync/app.ts';
import { KeyLeases } from '../../gateways/disksync/lease.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { connectSync, refusal, type SyncClient } from '../support/disksync.ts';
import { connectTestNats, testConfig } from '../support/gateway.ts';
import { startTestNats, type TestNats } from '../support/nats.ts';

const config = testConfig();
let server: TestNats;
let nats: Nats;
let tail: LiveTail;
let edge: DisksyncApp;
let url: string;
const clients: SyncClient[] = [];

/** Admission waits for `release()`; `reached` resolves once a connection is waiting in it. */
let gate: { reached: Promise<void>; release: () => void };
function holdAdmission(): void {
  let release = () => {};
  let reached = () => {};
  const open = new Promise<void>((r) => {
    release = r;
  });
  gate = { reached: new Promise<void>((r) => (reached = r)), release };
  held = async () => {
    reached();
    await open;
  };
}
let held = async () => {};
const guard: Guard = {
  async admit(req) {
    await held();
    return openGuard.admit(req);
  },
};

beforeAll(async () => {
  server = await startTestNats();
  nats = await connectTestNats(server.url, config);
  const log = createLogger(config.LOG_LEVEL, 'disksync');
  tail = await LiveTail.start(nats, log, {
    ringSize: config.SSE_RING_SIZE,
    staleAfterMs: config.SSE_FEED_STALE_MS,
    expectedCoins: config.COINS,
  });
  const leases = await KeyLeases.open(nats, config.DISKSYNC_LEASE_TTL_MS);
  edge = buildDisksyncApp({
    nats,
    tail,
    leases,
    log,
    guard,
    region: 'us',
    settings: disksyncSettings(config),
  });
  url = (await edge.app.listen({ host: '127.0.0.1', port: 0 })).replace(/^http/, 'ws');
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.ws.terminate();
  await edge?.shutdown();
  tail?.stop();
  await nats?.nc.close();
  await server?.cleanup();
});

const connect = () => {
  const c = connectSync(url);
  clients.push(c);
  return c;
};
const opened = (c: SyncClient) => new Promise<void>((r) => c.ws.once('open', () => r()));

describe('messages sent before admission completes', () => {
  it(`answers ${DISKSYNC_EARLY_MAX_MESSAGES} of them, in order, once admitted`, async () => {
    holdAdmission();
    const c = connect();
    await opened(c);
    await gate.reached;
    for (let i = 0; i < DISKSYNC_EARLY_MAX_MESSAGES; i++) c.send({ op: 'ping' });
    gate.release();
    await c.control(
      'pong',
      () => c.controls.filter((x) => x.type === 'pong').length === DISKSYNC_EARLY_MAX_MESSAGES,
    );
    expect(c.controls.map((x) => x.type)).toEqual(Array(DISKSYNC_EARLY_MAX_MESSAGES).fill('pong'));
    await c.close();
  });

  it('refuses one more at once with 4029 rate_limited, while admission is still held', async () => {
    holdAdmission();
    const c = connect();
    await opened(c);
    await gate.reached;
    for (let i = 0; i <= DISKSYNC_EARLY_MAX_MESSAGES; i++) c.send({ op: 'ping' });
    const { code, error } = await refusal(c);
    gate.release();
    expect(code).toBe(4029);
    expect(error).toMatchObject({ type: 'error', code: 'rate_limited', close_code: 4029 });
    expect(c.controls.filter((x) => x.type === 'pong')).toEqual([]);
  });

  it('refuses more than 1 MiB of them, however few, with 4029', async () => {
    holdAdmission();
    const c = connect();
    await opened(c);
    await gate.reached;
    c.send({ op: 'ping', pad: 'x'.repeat(DISKSYNC_EARLY_MAX_BYTES / 2) });
    c.send({ op: 'ping', pad: 'x'.repeat(DISKSYNC_EARLY_MAX_BYTES / 2) });
    const { code, error } = await refusal(c);
    gate.release();
    expect(code).toBe(4029);
    expect(error).toMatchObject({ code: 'rate_limited' });
  });
});

describe('a subscribe', () => {
  it(`of ${MAX_COINS_PER_SUBSCRIPTION + 1} coins is refused with 4005`, async () => {
    held = async () => {};
    const c = connect();
    const coins = Array.from({ length: MAX_COINS_PER_SUBSCRIPTION + 1 }, (_, i) => `QD${i}`);
    c.send({ op: 'subscribe', id: 's', coins });
    const { code, error } = await refusal(c);
    expect(code).toBe(4005);
    expect(error).toMatchObject({ code: 'invalid_params' });
    expect(String(error?.message)).toContain(`at most ${MAX_COINS_PER_SUBSCRIPTION} coins`);
  });
});
