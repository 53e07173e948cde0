/** Publishes canonical trade events through the real publish helper at a steady rate. */
import { randomUUID } from 'node:crypto';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { BookEvent, MarketEvent, Source, TradeEvent } from '../../contracts/events.ts';
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

export function book(symbol: string, i: number, levels = 10): BookEvent {
  const mid = 100 + (i % 50);
  const level = (k: number, sign: number) => ({ price: mid + sign * (0.5 + k), size: 1 + k });
  return {
    event_type: 'book',
    source: 'synthetic',
    symbol,
    timestamp_ms: 1_767_225_600_000 + i,
    capture_time_ms: 1_767_225_600_001 + i,
    bids: Array.from({ length: levels }, (_, k) => level(k, -1)),
    asks: Array.from({ length: levels }, (_, k) => level(k, 1)),
    best_bid: mid - 0.5,
    best_ask: mid + 0.5,
    mid_price: mid,
    spread_bps: (1 / mid) * 10_000,
  };
}

/** Publishes `events` at once through the real publish helper; `subject` puts each on its own subject (an account's). */
export async function publishNow(
  js: JetStreamClient,
  events: MarketEvent[],
  subject?: (e: MarketEvent) => string,
): Promise<void> {
  const prefix = randomUUID();
  await publishEvents(
    js,
    events.map((event, i) => ({
      event,
      id: `${prefix}.${i}`,
      ingestUs: nowUs(),
      ...(subject ? { subject: subject(event) } : {}),
    })),
    createLogger('silent'),
  );
}

export type RatePublisher = { stop(): Promise<number>; published(): number };

/** `perSecond` events spread over `coins` round-robin, in 10 ms ticks, until stopped. */
/** With `booksEvery` = n, every n-th event is a book (`bookLevels` per side, default 10) instead of a trade. */
/** `source` publishes as that source (default `synthetic`). */
export function publishAtRate(
  js: JetStreamClient,
  coins: string[],
  perSecond: number,
  opts: { booksEvery?: number; bookLevels?: number; source?: Source } = {},
): RatePublisher {
  const idPrefix = randomUUID();
  const made = (coin: string, i: number): MarketEvent =>
    opts.booksEvery && i % opts.booksEvery === 0 ? book(coin, i, opts.bookLevels) : trade(coin, i);
  const make = (coin: string, i: number): MarketEvent =>
    opts.source ? { ...made(coin, i), source: opts.source } : made(coin, i);
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
        batch.push({ event: make(coin, i), id: `${idPrefix}.${i}`, ingestUs: nowUs() });
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
