/**
 * `price.FeedMessage` objects (as @grpc/proto-loader decodes them: snake_case, int64 as numbers,
 * scalars filled with their defaults) → the iterator's items, shaped like the JSON events of the
 * unified stream: proto3 has no null, so a book's absent `best_bid`/`best_ask`/`mid_price`/
 * `spread_bps` (a snapshot's `best_bid`/`best_ask`/`mid_price`) become null as in JSON, and absent
 * optional fields stay absent. Derived streams carry `bar` and `book_snapshot` messages, shaped the
 * same way. Heartbeats and pongs are transport noise: null.
 */
import type { WireItem } from './resuming-stream.ts';
import type { AnyStreamEvent, StreamNotice, StreamWarning } from './stream-types.ts';

type Obj = Record<string, unknown>;

/** The fields JSON writes as null when unknown (proto3 `optional`, absent on the wire), per message kind. */
const NULLABLE_FIELDS = {
  trade: [],
  book: ['best_bid', 'best_ask', 'mid_price', 'spread_bps'],
  bar: [],
  book_snapshot: ['best_bid', 'best_ask', 'mid_price'],
} as const;
type EventKind = keyof typeof NULLABLE_FIELDS;
const EVENT_KINDS = Object.keys(NULLABLE_FIELDS) as EventKind[];

/** Drops proto-loader's synthetic oneof names (`_best_bid`) and absent optionals. */
function plain(o: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(o)) if (!k.startsWith('_') && v !== undefined && v !== null) out[k] = v;
  return out;
}

function eventOf(kind: EventKind, body: Obj): AnyStreamEvent {
  const o = plain(body);
  for (const f of NULLABLE_FIELDS[kind]) o[f] ??= null;
  // `own`: true on the account's own events (their `seq` is `OWN`'s), as JSON's `"own":true`;
  // false (the proto3 default) on every other event, which JSON leaves out.
  if (o.own !== true) delete o.own;
  // The producer stamps are 0 when unknown (proto3 default); JSON leaves them out.
  if (o.ingest_us === 0) delete o.ingest_us;
  if (o.publish_us === 0) delete o.publish_us;
  return o as AnyStreamEvent;
}

/** One FeedMessage as an item; null for heartbeats, pongs and unknown kinds. */
export function itemOfFeedMessage(m: Obj): WireItem | null {
  const kind = EVENT_KINDS.find((k) => m[k]);
  if (kind) {
    const event = eventOf(kind, m[kind] as Obj);
    return { type: 'event', seq: event.seq, event };
  }
  if (m.notice) return { type: 'notice', notice: plain(m.notice as Obj) as StreamNotice };
  if (m.warning) {
    const w = plain(m.warning as Obj);
    return { type: 'warning', warning: { request_id: '', ...w, terminal: false } as StreamWarning };
  }
  return null;
}

/** The items of a FeedMessage: each message of its `batch` (streams opened with `batch: true`), or its own. */
export function itemsOfFeedMessage(m: Obj): WireItem[] {
  const batch = (m.batch as { messages?: Obj[] } | null | undefined)?.messages;
  const items: WireItem[] = [];
  for (const each of batch ?? [m]) {
    const item = itemOfFeedMessage(each);
    if (item) items.push(item);
  }
  return items;
}
