/**
 * Rough cost of `RateLimiter.check` for a Pro key on a private nats-server, printed as JSON:
 * - atRate: a clock that advances 0.5 ms per call (exactly 2,000/s), so every call is admitted and
 *   one in ~25–50 takes a batch by a real KV compare-and-swap: wall µs per call, KV included;
 * - overLimit: the clock stands still once the burst is spent, so calls are refused from what the
 *   process last saw, without I/O;
 * - paced: real clock, 1,900 calls/s for 3 s: CPU µs per call (process.cpuUsage, NATS client included).
 *
 *   node --import tsx test/support/rate-limit-bench.ts
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createRateLimiter } from '../../gateways/core/rate-limit/rate-limiter.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';
import { startTestNats } from './nats.ts';

const server = await startTestNats();
const nats = await connectNats(server.url, 'rate-limit-bench', createLogger('silent'));

async function atRate(calls: number, keyId: string) {
  let clock = Date.now();
  const limiter = await createRateLimiter(nats, { now: () => clock });
  let admitted = 0;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    clock += 0.5;
    if ((await limiter.check(keyId, 'pro')).admitted) admitted++;
  }
  const us = ((performance.now() - t0) * 1000) / calls;
  await limiter.close();
  return { calls, admitted, usPerCall: Number(us.toFixed(2)) };
}

async function overLimit(calls: number) {
  const clock = Date.now();
  const limiter = await createRateLimiter(nats, { now: () => clock });
  for (let i = 0; i < 600; i++) await limiter.check('key_BenchOver', 'pro');
  let admitted = 0;
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) if ((await limiter.check('key_BenchOver', 'pro')).admitted) admitted++;
  const us = ((performance.now() - t0) * 1000) / calls;
  await limiter.close();
  return { calls, admitted, usPerCall: Number(us.toFixed(2)) };
}

async function paced(perSecond: number, seconds: number) {
  const limiter = await createRateLimiter(nats);
  let admitted = 0;
  let calls = 0;
  const cpu0 = process.cpuUsage();
  const start = Date.now();
  for (let tick = 0; tick < seconds * 100; tick++) {
    for (let i = 0; i < perSecond / 100; i++, calls++)
      if ((await limiter.check('key_BenchPaced', 'pro')).admitted) admitted++;
    await sleep(Math.max(0, start + (tick + 1) * 10 - Date.now()));
  }
  const cpu = process.cpuUsage(cpu0);
  await limiter.close();
  return { calls, admitted, cpuUsPerCall: Number(((cpu.user + cpu.system) / calls).toFixed(2)) };
}

await atRate(20_000, 'key_BenchWarm'); // warm-up
const result = {
  atRate: await atRate(200_000, 'key_BenchRate'),
  overLimit: await overLimit(1_000_000),
  paced: await paced(1_900, 3),
};
console.log(JSON.stringify(result));
await nats.nc.close();
await server.cleanup();
