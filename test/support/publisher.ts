/** Publishes canonical trade events through the real publish helper at a steady rate. */
import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { TradeEvent } from '../../contracts/events.ts';
import { createLogger } from '../../platform/logger.ts';
import { nowUs, type Outgoing, publishEvents } from '../../producers/publish.ts';

export function trade(symbol: string, i: number): TradeEvent {
  const price = 100 + (i % 50);
  return {
    event_type: 'trade',
    source: 'synthetic',
    symbol,
    timestamp_ms: 1_767_225_600_000 + i,
    capture_time_ms: 1_767_225_600_001 + i,
    side: i % 2 ? 'buy' : 'sell',
    price,
    size: 1,
    trade_id: `trd_${symbol}_${i}`,
    notional_usd: price,
  };
}

export type RatePublisher = { stop(): Promise<number>; published(): number };

/** `perSecond` events spread over `coins` round-robin, in 10 ms ticks, until stopped. */
export function publishAtRate(js: JetStreamClient, coins: string[], perSecond: number, idPrefix = randomUUID()): RatePublisher {
  const log = createLogger('silent');
  let i = 0;
  let stopped = false;
  const start = Date.now();
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((Date.now() - start) / 1_000) * perSecond);
      const batch: Outgoing[] = [];
      for (; i < due; i++) {
        const coin = coins[i % coins.length] as string;
        batch.push({ event: trade(coin, i), id: `${idPrefix}.${i}`, ingestUs: nowUs() });
      }
      if (batch.length) await publishEvents(js, batch, log);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    published: () => i,
    async stop() {
      stopped = true;
      await loop;
      return i;
    },
  };
}
