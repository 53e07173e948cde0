/**
 * `npm run bench -- isolation` (issue 27): another account keeps its latency while one free
 * account and anonymous clients do their worst. A Quant account's `md_midPrice` calls at
 * ISOLATION_RATE (200/s, open loop) against the real JSON-RPC edge (its own process, the
 * service's guard), measured alone and while a process of its own (bench/lib/abuser.ts) runs, flat
 * out with ISOLATION_CONCURRENCY (8) requests in flight each: a Basic key's batches of 100
 * `md_trades` (its rate limit refuses them once spent), made-up keys (failed key attempts from one
 * address) and requests with no key. Rounds alternate the two sides (bench/lib/rounds.ts); the
 * figure is the victim's p50 and p99 under abuse over alone (goal ≤ 1.5×), with every answer the
 * abuser got, by status; beside it the same abuse aimed at a bare route on the same machine, so
 * that the edge's own share is told from the machine's (two cores shared by every process).
 */
import { startTestAccounts } from '../test/support/accounts.ts';
import { testConfig } from '../test/support/gateway.ts';
import { publishBooks } from './lib/books.ts';
import { COINS, startBenchNats } from './lib/feed.ts';
import type { Histogram } from './lib/histogram.ts';
import { paced } from './lib/http-post.ts';
import { sleep, startWorker } from './lib/ipc.ts';
import { compareInRounds } from './lib/rounds.ts';

const RATE = Number(process.env.ISOLATION_RATE ?? 200);
const SECONDS = Number(process.env.ISOLATION_SECONDS ?? 4);
const ROUNDS = Number(process.env.ISOLATION_ROUNDS ?? 3);
const CONCURRENCY = Number(process.env.ISOLATION_CONCURRENCY ?? 8);
/** Which abuse runs (bench/lib/abuser.ts): trades, made_up_keys, no_key; default all three. */
const PATTERNS = (process.env.ISOLATION_PATTERNS ?? 'trades,made_up_keys,no_key').split(',');
const progress = (line: string) => process.stderr.write(`[isolation] ${line}\n`);

/** The victim: open loop at RATE for SECONDS, latency from each call's scheduled time (µs); a refusal ends the bench. */
async function victim(url: string, key: string): Promise<Histogram> {
  const body = (i: number) =>
    JSON.stringify({ jsonrpc: '2.0', id: i, method: 'md_midPrice', params: [COINS[i % COINS.length]] });
  const { h, errors } = await paced(url, { 'x-api-key': key }, RATE, SECONDS, body);
  if (errors > 0) throw new Error(`the victim was refused ${errors} times`);
  return h;
}

export async function run(): Promise<unknown> {
  const bench = await startBenchNats();
  const config = testConfig();
  const accounts = await startTestAccounts(bench.nats, config);
  const quant = (await accounts.key('quant')).key;
  const basic = (await accounts.key('basic')).key;
  const stopBooks = publishBooks(bench.nats, 40);
  const edge = await startWorker('jsonrpc-server', {
    nodeArgs: (process.env.ISOLATION_EDGE_NODE_ARGS ?? '').split(' ').filter(Boolean),
  });
  const bare = await startWorker('jsonrpc-server');
  const abuser = await startWorker('abuser', { env: { ABUSER: '1' } });
  const abuse: Record<string, number>[] = [];
  try {
    const url = await edge.call<string>('edge', { natsUrl: bench.url, secret: config.API_KEY_SECRET });
    const bareUrl = await bare.call<string>('bare', { bodies: { single: '{}', batch: '[]' } });
    await sleep(500);
    const underAbuseOf = (target: string, log: Record<string, number>[]) => async () => {
      await abuser.call('start', {
        url: target,
        basicKey: basic,
        concurrency: CONCURRENCY,
        patterns: PATTERNS,
      });
      try {
        return await victim(url, quant);
      } finally {
        log.push(await abuser.call<Record<string, number>>('stop', {}, 60_000));
      }
    };
    const elsewhere: Record<string, number>[] = [];
    const cmp = await compareInRounds(
      {
        alone: () => victim(url, quant),
        // The machine's share: the same abuser, aimed at a bare route on this machine instead.
        abuse_elsewhere: underAbuseOf(bareUrl, elsewhere),
        under_abuse: underAbuseOf(url, abuse),
      },
      ROUNDS,
      progress,
    );
    const ratio = cmp.p50_ratio.under_abuse ?? null;
    const elsewhereRatio = cmp.p50_ratio.abuse_elsewhere ?? null;
    const edgeShare =
      ratio !== null && elsewhereRatio ? Math.round((ratio / elsewhereRatio) * 1_000) / 1_000 : null;
    return {
      benchmark: 'isolation',
      victim: { plan: 'quant', method: 'md_midPrice', rate_per_s: RATE, seconds_per_window: SECONDS },
      abuse: {
        concurrency_per_pattern: CONCURRENCY,
        patterns: PATTERNS,
        answers_by_status_per_window: abuse,
      },
      ...cmp,
      answers_of_the_bare_route_per_window: elsewhere,
      ratio_p50_under_abuse: ratio,
      ratio_p99_under_abuse: cmp.p99_ratio.under_abuse ?? null,
      ratio_p50_abuse_elsewhere: elsewhereRatio,
      ratio_p50_edge_share: edgeShare,
      edge_share_what:
        'victim p50 with the abuse aimed at the edge ÷ with the same abuse aimed at a bare route on this machine: what the edge itself adds, the machine’s CPU contention taken out',
      goal: 'victim p50 under abuse ≤ 1.5× alone; the edge’s share ≤ 1.5×',
      goal_met: ratio !== null && ratio <= 1.5,
    };
  } finally {
    await abuser.close();
    await bare.close();
    await edge.close();
    await stopBooks();
    accounts.stop();
    await bench.cleanup();
  }
}
