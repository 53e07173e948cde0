/**
 * Protobuf message objects from the gateway's events, field for field the JSON the other
 * transports send (the event JSON is parsed once per event per process and kept with it).
 */
import { isDerivedKind, SNAPSHOT_KIND } from '../../contracts/derived.ts';
import type { FeedEvent } from '../core/feed-event.ts';

const parsed = new WeakMap<FeedEvent, Record<string, unknown>>();

/** The event's JSON fields (with `seq` and the producer's µs timestamps), parsed once. */
export function objectOf(ev: FeedEvent): Record<string, unknown> {
  let o = parsed.get(ev);
  if (!o) {
    o = JSON.parse(ev.json) as Record<string, unknown>;
    parsed.set(ev, o);
  }
  return o;
}

/** The `FeedMessage` of a trade or book event; null for anything else. */
export function feedMessageOf(ev: FeedEvent): Record<string, unknown> | null {
  if (ev.eventType === 'trade') return { trade: objectOf(ev) };
  if (ev.eventType === 'book') return { book: objectOf(ev) };
  if (ev.eventType === SNAPSHOT_KIND) return { book_snapshot: objectOf(ev) };
  if (isDerivedKind(ev.eventType)) return { bar: objectOf(ev) };
  return null;
}

const mids = new WeakMap<FeedEvent, Record<string, unknown> | null>();

/** The `MidPriceResponse` of a book event (null for a book without both sides). */
export function midOf(book: FeedEvent): Record<string, unknown> | null {
  let mid = mids.get(book);
  if (mid === undefined) {
    const o = objectOf(book);
    mid =
      typeof o.mid_price === 'number'
        ? {
            coin: book.symbol,
            source: book.source,
            price: o.mid_price,
            best_bid: o.best_bid,
            best_ask: o.best_ask,
            spread_bps: o.spread_bps,
            seq: book.seq,
            timestamp_ms: o.timestamp_ms,
            capture_time_ms: o.capture_time_ms,
            ingest_us: o.ingest_us,
            publish_us: o.publish_us,
          }
        : null;
    mids.set(book, mid);
  }
  return mid;
}
