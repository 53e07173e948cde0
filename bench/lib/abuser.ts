/**
 * The abusive side of `npm run bench -- isolation`, in a process of its own (`ABUSER=1`,
 * bench/lib/ipc.ts), so that its own CPU does not share the victim client's event loop: flat-out
 * loops against the JSON-RPC edge of one Basic key sending batches of 100 `md_trades` (the widest
 * read a free account can ask; refused by its rate limit once spent), of made-up keys (each a
 * failed key attempt from one address), and of requests with no key. Counts every answer by status.
 */
import { randomBytes } from 'node:crypto';
import { post } from './http-post.ts';
import { serveWorker } from './ipc.ts';

let running = false;
let loops: Promise<void>[] = [];
const statuses: Record<string, number> = {};

/** 100 `md_trades` of the last minute, 10,000 trades each at most. */
const tradesBatch = (now: number) =>
  JSON.stringify(
    Array.from({ length: 100 }, (_, i) => ({
      jsonrpc: '2.0',
      id: i,
      method: 'md_trades',
      params: {
        coin: ['BTC', 'ETH', 'SOL', 'HYPE'][i % 4],
        start_ms: now - 60_000,
        end_ms: now,
        limit: 10_000,
      },
    })),
  );
const midPrice = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'md_midPrice', params: ['BTC'] });

async function loop(url: string, body: string, headers: () => Record<string, string>): Promise<void> {
  while (running) {
    const a = await post(url, body, headers()).catch(() => ({ status: 0, body: '' }));
    statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  }
}

serveWorker({
  start({
    url,
    basicKey,
    concurrency,
    patterns,
  }: {
    url: string;
    basicKey: string;
    concurrency: number;
    patterns: string[];
  }) {
    running = true;
    for (const k of Object.keys(statuses)) delete statuses[k];
    const each = (n: number, f: () => Promise<void>) => Array.from({ length: n }, f);
    const trades = tradesBatch(Date.now());
    const kinds: Record<string, () => Promise<void>> = {
      trades: () => loop(url, trades, () => ({ 'x-api-key': basicKey })),
      made_up_keys: () =>
        loop(url, midPrice, () => ({ 'x-api-key': `mdk_live_${randomBytes(18).toString('base64url')}` })),
      no_key: () => loop(url, midPrice, () => ({})),
    };
    loops = patterns.flatMap((p) => {
      const kind = kinds[p];
      if (!kind) throw new Error(`unknown abuse pattern ${p}`);
      return each(concurrency, kind);
    });
  },
  async stop() {
    running = false;
    await Promise.all(loops);
    return { ...statuses };
  },
});
