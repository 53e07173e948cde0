/**
 * One Basic key sent round-robin over three real unified gateway processes (one private
 * nats-server, the shared `leases` KV between them): a burst of 40 simultaneous requests is
 * admitted at most 25 times, and over 63 s no 60 s window admits more than 100, while the first
 * minute does admit up to the limit. "Admitted" is anything but 429: a Basic key may not use the
 * unified stream, so an admitted request gets 403 tier_restricted (the limiter counts it first).
 * Every 429 carries Retry-After, whole-number X-RateLimit-* headers and the error body.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tierBuckets } from '../../contracts/limits.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import {
  expectExactWindows,
  expectWithinSpans,
  recordedAdmissions,
  watchBasicWindow,
} from '../support/lease-window.ts';
import type { TestNats } from '../support/nats.ts';
import { killAll, type ServiceProcess, startUnifiedGateways } from '../support/process.ts';
import {
  countBetween,
  lowestLevel,
  maxInWindow,
  maxSurelyInWindow,
  type Span,
} from '../support/rate-limit-reference.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

/** Wall time of the whole run, from the first request: past 60 s, so the window is seen sliding. */
const RUN_MS = 63_000;
/** Steady phase: one request every 80 ms, round-robin (about 4/s per process, 750/min in all). */
const EVERY_MS = 80;

const config = testConfig();
let server: TestNats;
let base: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
const gateways: ServiceProcess[] = [];

beforeAll(async () => {
  base = await startBase(config);
  ({ server, nats, accounts } = base);
});

afterAll(async () => {
  await killAll(gateways);
  await base?.close();
});

type Outcome = { url: string; sentMs: number; doneMs: number; status: number; res: Response };

async function send(url: string, key: string): Promise<Outcome> {
  const sentMs = Date.now();
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(10_000) });
  const doneMs = Date.now();
  return { url, sentMs, doneMs, status: res.status, res };
}

/** Every answer is 403 tier_restricted (admitted) or a complete 429; returns whether admitted. */
async function check(o: Outcome): Promise<boolean> {
  if (o.status === 429) {
    await expectError(o.res, 429, 'rate_limited');
    const h = o.res.headers;
    expect(h.get('retry-after')).toMatch(/^[1-9]\d*$/);
    expect(h.get('x-ratelimit-limit')).toBe('100');
    expect(h.get('x-ratelimit-remaining')).toBe('0');
    expect(h.get('x-ratelimit-reset')).toMatch(/^\d+$/);
    return false;
  }
  await expectError(o.res, 403, 'tier_restricted');
  return true;
}

it('a Basic key over 3 gateway processes: ≤ 25 in a burst, ≤ 100 in any 60 s', {
  timeout: 180_000,
}, async () => {
  const { key, keyId } = await accounts.key('basic');
  const urls = await startUnifiedGateways(3, server.url, config.API_KEY_SECRET, gateways);
  // The gateways made the shared `leases` bucket: watch this key's states before its first request.
  const watch = await watchBasicWindow(nats, keyId);
  const outcomes: Outcome[] = [];
  const admittedAt: Span[] = [];
  const record = async (o: Outcome) => {
    outcomes.push(o);
    if (await check(o)) admittedAt.push({ sentMs: o.sentMs, doneMs: o.doneMs });
  };

  // Warm-up, one request per process (key lookup, KV, JIT), then 0.5 s for the bucket to refill.
  const startMs = Date.now();
  for (const url of urls) await record(await send(url, key));
  expect(admittedAt).toHaveLength(3);
  await sleep(500);

  // (1) 40 simultaneous requests, round-robin over the three.
  const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => send(urls[i % 3] as string, key)));
  for (const o of burst) await record(o);
  const burstAdmitted = burst.filter((o) => o.status !== 429).length;
  const burstSpanMs = Math.max(...burst.map((o) => o.doneMs)) - Math.min(...burst.map((o) => o.sentMs));

  // (2) Round-robin every 80 ms until the run has lasted 63 s.
  const steadyMs = Date.now();
  const pending: Promise<void>[] = [];
  const failures: unknown[] = [];
  for (let i = 0; Date.now() < startMs + RUN_MS; i++) {
    pending.push(
      send(urls[i % 3] as string, key)
        .then(record)
        .catch((err: unknown) => void failures.push(err)),
    );
    await sleep(Math.max(1, steadyMs + (i + 1) * EVERY_MS - Date.now()));
  }
  await Promise.all(pending);
  if (failures.length > 0) throw failures[0];

  const admitted = admittedAt.map((a) => a.doneMs).sort((a, b) => a - b);
  await watch.stop();
  // The product's record: every admission stamped in the shared window by the three processes.
  const recorded = recordedAdmissions(watch.states);
  // Each admission was decided between sending and answer: requests sent and answered within one
  // 60 s were surely admitted in it, at most 100 (answer times alone may show a few more).
  const maxLatencyMs = Math.max(...admittedAt.map((a) => a.doneMs - a.sentMs));
  const max60s = maxSurelyInWindow(admittedAt, 60_000);
  const firstMinute = countBetween(admitted, startMs - 1, startMs + 60_000);
  console.log(
    JSON.stringify({
      requests: outcomes.length,
      admitted: admitted.length,
      refused: outcomes.filter((o) => o.status === 429).length,
      perProcess: urls.map((u) => outcomes.filter((o) => o.url === u && o.status !== 429).length),
      burst: { admitted: burstAdmitted, spanMs: burstSpanMs },
      firstMinute,
      max60s,
      max60sAsAnswered: maxInWindow(admitted, 60_000),
      maxLatencyMs,
      afterFirstMinute: countBetween(admitted, startMs + 60_000, Infinity),
      recorded: recorded.length,
      recordedMax100ms: maxInWindow(recorded, 100),
      lowestRecordedLevel: lowestLevel(tierBuckets('basic'), recorded),
    }),
  );
  // The product recorded each admission the clients saw, at a time within its request's span;
  // its window (each state written to the shared KV) is exactly the admissions of the last 60 s.
  expect(recorded).toHaveLength(admitted.length);
  expectWithinSpans(
    recorded,
    admittedAt.map((a) => a.sentMs),
    admitted,
  );
  expectExactWindows(watch.states, 100, 60_000);
  // The exact bucket on those times: 25 at once, 10/s after, no slack for slow answers.
  expect(lowestLevel(tierBuckets('basic'), recorded)).toBeGreaterThanOrEqual(-1e-9);
  expect(maxInWindow(recorded, 100)).toBeLessThanOrEqual(25 + 1);
  expect(maxInWindow(recorded, 60_000)).toBeLessThanOrEqual(100);

  expect(burstAdmitted).toBeGreaterThanOrEqual(20);
  expect(max60s).toBeLessThanOrEqual(100);
  expect(firstMinute).toBeGreaterThanOrEqual(90);
  expect(firstMinute).toBeLessThanOrEqual(100);
  // Past the first minute the window slides: the first admissions left it, others got in.
  expect(countBetween(admitted, startMs + 60_000, Infinity)).toBeGreaterThan(0);
});
