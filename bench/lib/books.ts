/** Book events of every bench coin at a steady rate, through the real publisher (the JSON-RPC benches' feed). */

import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs, publishEvents } from '../../producers/publish.ts';
import { book } from '../../test/support/publisher.ts';
import { COINS } from './feed.ts';
import { sleep } from './ipc.ts';

/** Publishes books of every coin at `perSecond` until stopped. */
export function publishBooks(nats: Nats, perSecond: number) {
  const log = createLogger('silent');
  let stopped = false;
  let i = 0;
  const start = Date.now();
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((Date.now() - start) / 1_000) * perSecond) + COINS.length;
      const out = [];
      for (; i < due; i++) {
        const coin = COINS[i % COINS.length] as string;
        out.push({
          event: { ...book(coin, i), timestamp_ms: Date.now(), capture_time_ms: Date.now() },
          id: `bench-rpc.${i}`,
          ingestUs: nowUs(),
        });
      }
      if (out.length) await publishEvents(nats.js, out, log);
      await sleep(25);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}
