/**
 * The concurrent-stream cap of a key holds across gateway processes (gateways/core/stream-slots.ts):
 * a Pro key (cap 10) with 6 streams on one real unified gateway process and 4 on another gets 429
 * `subscription_limit` on either; a stream closed on one frees a slot on the other; after a kill -9
 * of the process holding 5 of them, those 5 stop counting within STREAM_LEASE_TTL_MS after their
 * last renewal (asserted: TTL + one renewal period + a stated margin after the kill) and not before
 * the other process admits exactly 10 in all, never 11.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestAccounts } from '../support/accounts.ts';
import { eventually } from '../support/eventually.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startUnifiedGateways, stopProcess } from '../support/process.ts';
import { openSse, type SseStream } from '../support/sse.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const TTL_MS = 3_000;
/** Beyond TTL + one renewal period: five admissions, each a request, polled 100 ms apart. */
const FREED_MARGIN_MS = 2_000;
const config = testConfig();
let server: TestNats;
let base: BaseStack;
let accounts: TestAccounts;
const gateways: ServiceProcess[] = [];
const streams: SseStream[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ server, accounts } = base);
});

afterAll(async () => {
  for (const s of streams) s.abort();
  await killAll(gateways);
  await base?.close();
});

it('Pro cap 10 over two gateway processes; a kill -9 frees its streams within the lease TTL', {
  timeout: 180_000,
}, async () => {
  const { key } = await accounts.key('pro');
  const [a, b] = (await startUnifiedGateways(2, server.url, config.API_KEY_SECRET, gateways, {
    STREAM_LEASE_TTL_MS: String(TTL_MS),
  })) as [string, string];
  const open = (url: string) => openSse(`${url}?coin=BTC`, () => {}, { 'x-api-key': key });
  const hold = async (url: string) => {
    const s = await open(url);
    expect(s.status).toBe(200);
    streams.push(s);
    return s;
  };
  const refused = async (url: string) => {
    const res = await fetch(`${url}?coin=BTC`, { headers: { 'x-api-key': key } });
    await expectError(res, 429, 'subscription_limit');
  };

  const onA: SseStream[] = [];
  for (let i = 0; i < 6; i++) onA.push(await hold(a));
  for (let i = 0; i < 4; i++) await hold(b);
  await refused(a);
  await refused(b);

  // One closed on A frees one slot, taken on B (its lease is released, not left to expire).
  onA.pop()?.abort();
  const taken = await eventually(
    async () => {
      const s = await open(b);
      if (s.status === 200) return s;
      s.abort();
      return null;
    },
    TTL_MS - 500,
    'slot freed on A admitted on B before any lease could expire',
    100,
  );
  streams.push(taken);
  await refused(b);

  // kill -9 A: its 5 leases still count (nothing released them) …
  const killedAt = Date.now();
  if (gateways[0]) await stopProcess(gateways[0]);
  await refused(b);
  // … until they expire; then B admits exactly the 5 freed slots.
  let admitted = 0;
  await eventually(
    async () => {
      const s = await open(b);
      if (s.status !== 200) return false;
      streams.push(s);
      admitted++;
      return admitted === 5;
    },
    TTL_MS * 3,
    'the crashed holder’s slots freed',
    100,
  );
  const freedAfterMs = Date.now() - killedAt;
  // A lease stops counting TTL after its last renewal, which came at most one renewal period
  // (TTL / 3) before the kill; the margin covers the five admissions polled 100 ms apart.
  expect(freedAfterMs).toBeLessThanOrEqual(TTL_MS + TTL_MS / 3 + FREED_MARGIN_MS);
  await refused(b);
  console.log(JSON.stringify({ leaseTtlMs: TTL_MS, freedAfterKillMs: freedAfterMs }));
});
