/**
 * The TypeScript stream client against real unified gateway processes: its connections are cut
 * at random points through a relay and its gateway is killed and restarted on the same port while
 * events keep being published; it yields every stream sequence exactly once, its waits follow the
 * server's `retry:` with exponential backoff per consecutive failure, notices and warnings come as
 * typed values, and authentication errors end it with a typed error carrying the request id.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MdpError, stream } from '../../clients/typescript/src/index.ts';
import { freePort } from '../../platform/free-port.ts';
import { type CutProxy, startCutProxy } from '../support/cut-proxy.ts';
import { eventually } from '../support/eventually.ts';
import { killAll, type ServiceProcess, startUnifiedGateways, stopProcess } from '../support/process.ts';
import { publishAtRate } from '../support/publisher.ts';
import { startStack, type TestStack } from '../support/stack.ts';
import { lastSeq } from '../support/stored-seqs.ts';
import { collectStream, reconnectsOf } from '../support/stream-collect.ts';

const RETRY_MS = 100;
let stack: TestStack;
let proxy: CutProxy;
let port: number;
const gateways: ServiceProcess[] = [];

const startGateway = async () =>
  (
    await startUnifiedGateways(1, stack.server.url, stack.config.API_KEY_SECRET, gateways, {
      UNIFIED_PORT_US: String(port),
      SSE_RETRY_MS: String(RETRY_MS),
    })
  )[0] as string;

beforeAll(async () => {
  stack = await startStack();
  port = await freePort();
  const url = await startGateway();
  proxy = await startCutProxy(url);
});

afterAll(async () => {
  await killAll(gateways);
  await proxy?.close();
  await stack?.close();
});

const collect = collectStream;

const reconnects = reconnectsOf;

it('yields every sequence exactly once across cut connections and a killed gateway, backing off per failure', async () => {
  const { key } = await stack.accounts.key('quant');
  // from: 0 = resume after position 0: the whole stream, however soon the publisher starts.
  const s = stream({ url: proxy.url, key, from: 0, random: () => 0.5 });
  const c = collect(s);
  const publisher = publishAtRate(stack.nats.js, ['BTC', 'ETH', 'SOL'], 300);

  for (let cut = 0; cut < 8; cut++) {
    const seen = c.seqs.length;
    await eventually(async () => c.seqs.length >= seen + 40 + cut * 7, 20_000);
    // Eight cuts of the live stream, each seen by the client as one reconnection: a cut that only
    // met a connection the stream no longer used (one left from an earlier attempt) is made again.
    const before = reconnects(c).length;
    await eventually(
      async () => {
        if (reconnects(c).length > before) return true;
        proxy.cut();
        await new Promise((r) => setTimeout(r, 300));
        return reconnects(c).length > before;
      },
      20_000,
      `cut ${cut + 1}: the client reconnects`,
    );
  }
  // The gateway dies: every attempt is refused until it is back, so the waits double.
  const seen = c.seqs.length;
  const gateway = gateways[gateways.length - 1] as ServiceProcess;
  await stopProcess(gateway);
  await eventually(async () => reconnects(c).some((r) => r.attempt >= 4), 20_000);
  await startGateway();
  await eventually(async () => c.seqs.length >= seen + 300, 30_000);
  await publisher.stop();
  const last_seq = await lastSeq(stack.nats);
  await eventually(async () => c.seqs[c.seqs.length - 1] === last_seq, 30_000);
  s.close();
  await c.done;

  expect(c.error).toBeNull();
  expect(last_seq).toBeGreaterThan(1_000);
  expect(c.seqs).toEqual(Array.from({ length: last_seq }, (_, i) => i + 1));
  const waits = reconnects(c);
  expect(waits.length).toBeGreaterThanOrEqual(12);
  // The server's retry (100 ms, not the 1 s default) · 2^(n−1), jitter factor 1.25 at random() = 0.5.
  for (const w of waits) expect(w.delayMs).toBe(Math.round(RETRY_MS * 2 ** (w.attempt - 1) * 1.25));
  expect(Math.max(...waits.map((w) => w.attempt))).toBeGreaterThanOrEqual(4);
  expect(waits.every((w) => w.error instanceof MdpError && w.error.code === 'network_error')).toBe(true);
  expect(s.reconnects).toBe(waits.length);
});

it('surfaces an unknown coin as a typed warning and a position beyond the end as a notice, then resumes', async () => {
  const { key } = await stack.accounts.key('pro');
  const last_seq = await lastSeq(stack.nats);
  const s = stream({ url: proxy.url, key, coins: ['BTC', 'NOPE'], from: last_seq + 1_000_000 });
  const c = collect(s);
  await eventually(async () => c.items.some((i) => i.type === 'notice'), 20_000);
  const publisher = publishAtRate(stack.nats.js, ['BTC'], 50);
  await eventually(async () => c.seqs.length >= 3, 20_000);
  await publisher.stop();
  s.close();
  await c.done;

  const warning = c.items.find((i) => i.type === 'warning');
  expect(warning).toMatchObject({
    type: 'warning',
    warning: {
      code: 'coin_not_found',
      terminal: false,
      coin: 'NOPE',
      request_id: expect.stringMatching(/^req_/),
    },
  });
  const notice = c.items.find((i) => i.type === 'notice');
  expect(notice).toMatchObject({
    type: 'notice',
    notice: {
      code: 'position_beyond_end',
      resumed_after: last_seq,
      requested_last_event_id: last_seq + 1_000_000,
    },
  });
  // Events after the notice follow the position the server resumed after, not the requested one.
  expect(c.seqs[0]).toBe(last_seq + 1);
  const events = c.items.filter((i) => i.type === 'event');
  expect(events.every((e) => e.type === 'event' && e.event.symbol === 'BTC' && e.event.seq === e.seq)).toBe(
    true,
  );
});

it('stops with a typed error on terminal authentication errors, without retrying', async () => {
  const { key, keyId, accountId } = await stack.accounts.key('quant');
  const s = stream({ url: proxy.url, key });
  const c = collect(s);
  const publisher = publishAtRate(stack.nats.js, ['ETH'], 50);
  await eventually(async () => c.seqs.length >= 2, 20_000);
  await stack.accounts.service.revokeKey(accountId, keyId);
  await c.done;
  await publisher.stop();
  expect(c.error).toBeInstanceOf(MdpError);
  expect(c.error).toMatchObject({
    code: 'auth_expired',
    terminal: true,
    requestId: expect.stringMatching(/^req_/),
  });
  expect(reconnects(c)).toEqual([]);

  // Before the first byte: the HTTP status and the error body's code and request id.
  const again = collect(stream({ url: proxy.url, key }));
  await again.done;
  expect(again.error).toMatchObject({
    code: 'key_revoked',
    status: 401,
    requestId: expect.stringMatching(/^req_/),
  });
  const basic = collect(stream({ url: proxy.url, key: (await stack.accounts.key('basic')).key }));
  await basic.done;
  expect(basic.error).toMatchObject({ code: 'tier_restricted', status: 403 });
  expect([...again.items, ...basic.items]).toEqual([]);
});
