/**
 * Between a connector and the one publish helper (producers/publish.ts): events are queued in the
 * order their frames arrived and flushed as one pipelined batch while the previous batch's acks
 * are awaited, so a burst of frames costs one round trip per batch, not per event, and a quiet
 * venue's event is sent at once. Bounded: past `highWater` queued events `onFull` is told to stop
 * reading the venue (WebSocket paused) and `onDrained` to resume once the queue is empty.
 * Lag (venue event time → stored) is observed per event when its batch is stored.
 */
import type { MarketEvent } from '../../contracts/events.ts';
import type { Logger } from '../../platform/logger.ts';
import { connectorEvents, connectorLag } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { type Outgoing, publishEvents } from '../publish.ts';

export type PublishQueueOptions = {
  venue: string;
  maxBatch?: number;
  highWater?: number;
  onFull?: () => void;
  onDrained?: () => void;
};

export class PublishQueue {
  private pending: Outgoing[] = [];
  private flushing: Promise<void> | null = null;
  private full = false;
  private stored = 0;
  private readonly abort = new AbortController();
  private readonly maxBatch: number;
  private readonly highWater: number;
  /** Metric children bound once: a label lookup per event would cost more than the event. */
  private readonly counted: Record<MarketEvent['event_type'], { inc(): void }>;
  private readonly lag: { observe(seconds: number): void };

  constructor(
    private readonly nats: Nats,
    private readonly log: Logger,
    private readonly opts: PublishQueueOptions,
  ) {
    this.maxBatch = opts.maxBatch ?? 1_000;
    this.highWater = opts.highWater ?? 20_000;
    this.counted = {
      trade: connectorEvents.labels(opts.venue, 'trade'),
      book: connectorEvents.labels(opts.venue, 'book'),
    };
    this.lag = connectorLag.labels(opts.venue);
  }

  /** Queues one event under its venue-derived message id; `receivedUs` = when its frame arrived. */
  push(event: MarketEvent, id: string, receivedUs: number): void {
    this.pending.push({ event, id, ingestUs: receivedUs });
    this.counted[event.event_type].inc();
    if (!this.full && this.pending.length >= this.highWater) {
      this.full = true;
      this.opts.onFull?.();
    }
    this.flushing ??= this.flush();
  }

  /** Counts an event handed over that is not sent: `MD` holds it already (log-floor.ts). */
  skip(event: MarketEvent): void {
    this.counted[event.event_type].inc();
  }

  /** Messages stored so far (JetStream duplicates not counted). */
  get storedCount(): number {
    return this.stored;
  }

  /** Resolves when every queued event has been published. */
  async drained(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Stops retrying; what is queued and not yet sent is dropped (the venue resends nothing). */
  async stop(): Promise<void> {
    await Promise.race([this.drained(), new Promise((r) => setTimeout(r, 2_000))]);
    this.abort.abort();
    await this.flushing;
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0 && !this.abort.signal.aborted) {
        const batch =
          this.pending.length <= this.maxBatch ? this.pending : this.pending.slice(0, this.maxBatch);
        this.pending = batch === this.pending ? [] : this.pending.slice(this.maxBatch);
        this.stored += await publishEvents(this.nats.js, batch, this.log, this.abort.signal);
        const nowMs = Date.now();
        for (const o of batch) this.lag.observe(Math.max(0, nowMs - o.event.timestamp_ms) / 1_000);
        if (this.full && this.pending.length === 0) {
          this.full = false;
          this.opts.onDrained?.();
        }
      }
    } finally {
      this.flushing = null;
    }
  }
}
