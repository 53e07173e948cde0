/**
 * The latest-state view of a gateway process: the last book and the last trade of every source and
 * coin of the platform's feed, so that a mid price or a book snapshot is answered from memory
 * (JSON-RPC `md_midPrice` / `md_l2Book`, gRPC `GetMidPrice`). Fed by the process's live tail and
 * warmed at start from the log (the last stored message of every platform subject).
 *
 * Invariant: an entry only moves forward. An event replaces the held one of its (source, coin,
 * event type) only when its stream sequence is higher, so the warm-up and the tail may deliver in
 * any order and overlap without ever putting an older book back. Accounts' own events
 * (`stream: true`) never enter: the view is the platform's feed, the same for every key.
 *
 * The fields of an event are parsed from its JSON once, on first use (`fieldsOf`), and kept with
 * the event, so many readers of one book cost one parse.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import type { BookLevel } from '../../contracts/events.ts';
import { STREAMS } from '../../contracts/streams.ts';
import { MD_ALL } from '../../contracts/subjects.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { decodeFeedEvent, type FeedEvent } from './feed-event.ts';
import type { LiveTail } from './live-tail.ts';

/** What a book or trade event holds besides its routing (absent fields are null). */
export type EventFields = {
  timestamp_ms: number | null;
  bids: readonly BookLevel[];
  asks: readonly BookLevel[];
  best_bid: number | null;
  best_ask: number | null;
  mid_price: number | null;
  spread_bps: number | null;
};

/** The last book and trade of one source and coin. */
export type SourceState = { book: FeedEvent | null; trade: FeedEvent | null };

const WARM_TIMEOUT_MS = 10_000;

const fieldsCache = new WeakMap<FeedEvent, EventFields>();

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const levels = (v: unknown): readonly BookLevel[] => (Array.isArray(v) ? (v as BookLevel[]) : []);

/** The fields of `ev`, parsed once per event per process. */
export function fieldsOf(ev: FeedEvent): EventFields {
  let f = fieldsCache.get(ev);
  if (!f) {
    const o = JSON.parse(ev.json) as Record<string, unknown>;
    f = {
      timestamp_ms: num(o.timestamp_ms),
      bids: levels(o.bids),
      asks: levels(o.asks),
      best_bid: num(o.best_bid),
      best_ask: num(o.best_ask),
      mid_price: num(o.mid_price),
      spread_bps: num(o.spread_bps),
    };
    fieldsCache.set(ev, f);
  }
  return f;
}

export class LatestState {
  /** coin → source → state. */
  private readonly coins = new Map<string, Map<string, SourceState>>();
  private detach: () => void = () => {};

  private constructor(private readonly nats: Nats) {}

  /** Attaches to `tail` (and takes what its ring holds), then warms from the log; resolves when warm. */
  static async start(nats: Nats, tail: LiveTail, log: Logger): Promise<LatestState> {
    const view = new LatestState(nats);
    view.detach = tail.attach({
      selection: { coins: null, eventTypes: null, sources: null, viewer: null },
      lastSeq: tail.lastSeq,
      deliver: (ev) => view.take(ev),
    });
    for (const ev of tail.ring.after(0, tail.ring.size).events) view.take(ev);
    await view.warm().catch((err) => log.warn({ err: String(err) }, 'latest state not warmed from the log'));
    return view;
  }

  /** Whether the view can be trusted now: false while NATS is unreachable (it may be stale). */
  available(): boolean {
    return this.nats.connected();
  }

  /** The state of each source of `coin` (empty when none has published). */
  sourcesOf(coin: string): ReadonlyMap<string, SourceState> {
    return this.coins.get(coin) ?? new Map();
  }

  /** Every coin with at least one event, with its sources. */
  entries(): IterableIterator<[string, ReadonlyMap<string, SourceState>]> {
    return this.coins.entries();
  }

  stop(): void {
    this.detach();
  }

  /** Keeps `ev` when it is the newest of its kind (platform events only). */
  take(ev: FeedEvent | null): void {
    if (!ev || ev.owner !== null) return;
    const kind = ev.eventType === 'book' ? 'book' : ev.eventType === 'trade' ? 'trade' : null;
    if (!kind) return;
    let sources = this.coins.get(ev.symbol);
    if (!sources) {
      sources = new Map();
      this.coins.set(ev.symbol, sources);
    }
    let state = sources.get(ev.source);
    if (!state) {
      state = { book: null, trade: null };
      sources.set(ev.source, state);
    }
    const held = state[kind];
    if (!held || held.seq < ev.seq) state[kind] = ev;
  }

  /** The last stored message of every platform subject (one ordered consumer, last per subject). */
  private async warm(): Promise<void> {
    const consumer = await this.nats.js.consumers.get(STREAMS.MD, {
      filter_subjects: MD_ALL,
      deliver_policy: DeliverPolicy.LastPerSubject,
    });
    if ((await consumer.info()).num_pending === 0) return;
    const messages = await consumer.consume({ max_messages: 1_000 });
    const timer = setTimeout(() => messages.stop(), WARM_TIMEOUT_MS);
    try {
      for await (const m of messages) {
        this.take(decodeFeedEvent(m, m.info.streamSequence));
        if (m.info.pending === 0) break;
      }
    } finally {
      clearTimeout(timer);
      messages.stop();
    }
  }
}
