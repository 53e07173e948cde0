/**
 * Publishes the deterministic market model live: one model per coin whose time 0 is the wall
 * clock at start, events released when their capture time has passed, published to `MD` in
 * 10 ms batches with a `Nats-Msg-Id` unique to (run, coin, event index).
 */
import type { MarketEvent } from '../../contracts/events.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs, type Outgoing, publishEvents } from '../publish.ts';
import { type MarketModelConfig, parseMarketModelConfig } from './config.ts';
import { boundaryLogPrices, simulateBlock } from './market.ts';

export type LiveRunnerOptions = {
  coins: readonly string[];
  seed: number;
  /** Mean trades per second per coin. */
  tradeRate: number;
  bookIntervalMs: number;
  tickMs?: number;
};

/** Walks one coin's model block by block; boundaries are computed a day at a time. */
class CoinCursor {
  private block = 0;
  private events: MarketEvent[] = [];
  private next = 0;
  private bounds: Float64Array;
  emitted = 0;

  constructor(readonly config: MarketModelConfig) {
    this.bounds = boundaryLogPrices(config, 1_440);
  }

  /** Events whose capture time is at or before `nowMs`, in model order. */
  due(nowMs: number, out: MarketEvent[]): void {
    for (;;) {
      if (this.next === this.events.length) {
        if (this.block + 1 >= this.bounds.length - 1)
          this.bounds = boundaryLogPrices(this.config, this.bounds.length - 1 + 1_440);
        this.events = simulateBlock(this.config, this.block++, this.bounds);
        this.next = 0;
      }
      const ev = this.events[this.next] as MarketEvent;
      if (ev.capture_time_ms > nowMs) return;
      out.push(ev);
      this.next++;
      this.emitted++;
    }
  }
}

export type LiveRunner = { stop(): Promise<void>; published(): number };

export function startLiveRunner(nats: Nats, opts: LiveRunnerOptions, log: Logger): LiveRunner {
  const startMs = Date.now();
  const runId = startMs.toString(36);
  const cursors = opts.coins.map(
    (symbol) =>
      new CoinCursor(
        parseMarketModelConfig({
          symbol,
          seed: opts.seed,
          trade_intensity: opts.tradeRate,
          book_update_interval_ms: opts.bookIntervalMs,
          start_time_ms: startMs,
        }),
      ),
  );
  const abort = new AbortController();
  let published = 0;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      const now = Date.now();
      const batch: Outgoing[] = [];
      for (const c of cursors) {
        const events: MarketEvent[] = [];
        const before = c.emitted;
        c.due(now, events);
        for (const [i, event] of events.entries()) {
          batch.push({ event, id: `sim.${event.symbol}.${runId}.${before + i}`, ingestUs: nowUs() });
        }
      }
      if (batch.length) published += await publishEvents(nats.js, batch, log, abort.signal);
      await new Promise((r) => setTimeout(r, opts.tickMs ?? 10));
    }
  })();
  log.info(
    { coins: opts.coins, seed: opts.seed, tradeRate: opts.tradeRate, bookIntervalMs: opts.bookIntervalMs },
    'live simulator publishing',
  );
  return {
    published: () => published,
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
