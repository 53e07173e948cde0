/**
 * One gateway-like OS process for the multi-process rate-limit test. It connects to NATS, builds
 * its own rate limiter, says `{"ready":true}`, waits for a start time (epoch ms) on stdin, then
 * hammers one key from `parallel` concurrent loops until `durationMs` has passed (0: each loop
 * checks exactly once, all at the same instant), pausing `pauseMs` between rounds, and prints
 * `{"admitted":[epoch ms...],"admittedSent":[epoch ms...],"rejected":n,"unavailable":n,
 * "firstSentMs":n,"lastDoneMs":n}`: when each admitted check returned and when it was called (its
 * decision was made in between), and the span of all checks.
 *
 *   node --import tsx test/support/rate-limit-worker.ts <natsUrl> <keyId> <tier> <durationMs> <pauseMs> <parallel>
 */
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Tier } from '../../contracts/limits.ts';
import { createRateLimiter } from '../../gateways/core/rate-limit/rate-limiter.ts';
import { createLogger } from '../../platform/logger.ts';
import { connectNats } from '../../platform/nats.ts';

const [natsUrl, keyId, tier, durationMs, pauseMs, parallel] = process.argv.slice(2);
if (!natsUrl || !keyId || !tier)
  throw new Error('usage: <natsUrl> <keyId> <tier> <durationMs> <pauseMs> <parallel>');

const nats = await connectNats(natsUrl, `rate-limit-worker-${process.pid}`, createLogger('silent'));
const limiter = await createRateLimiter(nats);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);

const startAt = await new Promise<number>((resolve) => {
  const rl = createInterface({ input: process.stdin });
  rl.once('line', (line) => resolve(Number(line)));
  // The test went away before starting us.
  rl.once('close', () => process.exit(1));
});
await sleep(Math.max(0, startAt - Date.now()));
const endAt = startAt + Number(durationMs);

const admitted: number[] = [];
const admittedSent: number[] = [];
let rejected = 0;
let unavailable = 0;
let firstSentMs = Infinity;
let lastDoneMs = 0;
async function loop(): Promise<void> {
  do {
    const sentMs = Date.now();
    firstSentMs = Math.min(firstSentMs, sentMs);
    const d = await limiter.check(keyId as string, tier as Tier);
    const doneMs = Date.now();
    lastDoneMs = Math.max(lastDoneMs, doneMs);
    if (d.admitted) {
      admitted.push(doneMs);
      admittedSent.push(sentMs);
    } else if (d.unavailable) unavailable++;
    else rejected++;
    if (Date.now() < endAt) await sleep(Number(pauseMs));
  } while (Date.now() < endAt);
}
await Promise.all(Array.from({ length: Number(parallel) || 1 }, loop));
process.stdout.write(
  `${JSON.stringify({ admitted, admittedSent, rejected, unavailable, firstSentMs, lastDoneMs })}\n`,
);
await limiter.close();
await nats.nc.close();
