/**
 * Publishes the deterministic market model live: one model per stream of events whose time 0 is
 * the wall clock at the model's start; events are released when their capture time has passed and
 * published in 10 ms batches. Each event's `Nats-Msg-Id` is (run, trade id or book time), so a
 * retried publish, or a second producer of the same run, is stored once.
 */
import type { MarketEvent } from '../../contracts/events.ts';
import { simRunMsgIdPrefix } from '../../contracts/message-ids.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { nowUs, type Outgoing, publishEvents } from '../publish.ts';
import { type MarketModelConfig, parseMarketModelConfig } from './config.ts';
import { boundaryLogPrices, simulateBlock } from './market.ts';

/** Walks one model block by block from a given model time; boundaries are computed a day at a time. */
export class ModelCursor {
  private block: number;
  private events: MarketEvent[] = [];
  private next = 0;
  private bounds: Float64Array;

  constructor(
    readonly config: MarketModelConfig,
    fromBlock = 0,
  ) {
    this.block = fromBlock;
    this.bounds = boundaryLogPrices(config, fromBlock + 1_440);
  }

  /** Appends the events whose capture time is at or before `nowMs`, in model order. */
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
    }
  }
}

/** Unique within a model run whatever block the cursor started from: trade ids, book times. */
const eventKey = (ev: MarketEvent): string =>
  ev.event_type === 'trade' ? ev.trade_id : `book.${ev.timestamp_ms}`;

/** One model to run: its cursor, where its events go, and the prefix of their message ids. */
export type LiveModel = { cursor: ModelCursor; subject?: (ev: MarketEvent) => string; idPrefix: string };

export type LiveRunner = { stop(): Promise<void>; published(): number };

export function runModels(nats: Nats, models: LiveModel[], log: Logger, tickMs = 10): LiveRunner {
  const abort = new AbortController();
  let published = 0;
  const loop = (async () => {
    while (!abort.signal.aborted) {
      const now = Date.now();
      const batch: Outgoing[] = [];
      for (const m of models) {
        const events: MarketEvent[] = [];
        m.cursor.due(now, events);
        for (const event of events) {
          batch.push({
            event,
            id: `${m.idPrefix}.${eventKey(event)}`,
            ingestUs: nowUs(),
            ...(m.subject ? { subject: m.subject(event) } : {}),
          });
        }
      }
      if (batch.length) published += await publishEvents(nats.js, batch, log, abort.signal);
      await new Promise((r) => setTimeout(r, tickMs));
    }
  })();
  return {
    published: () => published,
    async stop() {
      abort.abort();
      await loop;
    },
  };
}

export type LiveRunnerOptions = {
  coins: readonly string[];
  seed: number;
  tradeRate: number;
  bookIntervalMs: number;
};

/** The live markets of `npm start`: every coin on `MD`. */
export function startLiveRunner(nats: Nats, opts: LiveRunnerOptions, log: Logger): LiveRunner {
  const startMs = Date.now();
  const runId = startMs.toString(36);
  const models = opts.coins.map((symbol) => ({
    cursor: new ModelCursor(
      parseMarketModelConfig({
        symbol,
        seed: opts.seed,
        trade_intensity: opts.tradeRate,
        book_update_interval_ms: opts.bookIntervalMs,
        start_time_ms: startMs,
      }),
    ),
    idPrefix: simRunMsgIdPrefix(symbol, runId),
  }));
  log.info(
    { coins: opts.coins, seed: opts.seed, tradeRate: opts.tradeRate, bookIntervalMs: opts.bookIntervalMs },
    'live simulator publishing',
  );
  return runModels(nats, models, log);
}
