/**
 * The buffered sink's Framer for the disk-sync edge (gateways/core/sink-parts.ts). An event's
 * frame is made once per process per encoding and memoised in `ev.wire`: for `json` it is the
 * stored bytes as they are (`ev.json`, no parse); for `msgpack` the event transcoded once
 * from that JSON (json-msgpack.ts). Control
 * messages are JSON objects with a `type` (`notice`, `warning`, and `subscribed`, `caught_up`,
 * `pong` sent as notices with their own type; `record_skipped` notice in place of a stored record that is not an
 * event, see `skippedFrame`). The json encoding frames the stored bytes unparsed (the catch-up hot
 * path): a record that merely looks like a JSON object reaches a json client as it is.
 *
 * An event whose frame would pass the 4 MB frame limit (the stream's own limit is NATS's
 * max_payload, which an operator may raise past it) cannot be delivered. Skipping it would leave a
 * gap in a copy that must be exact, and sending it would break the protocol (the client closes
 * 1009): the connection ends with 1011 `internal` before it (`undeliverable`), holding an exact
 * prefix of the log. A resume reaches the same event and ends the same way, loudly, until an
 * operator removes it: never a silent gap.
 */

import { type Encoding, MAX_FRAME_BYTES } from '../../contracts/disksync.ts';
import type { ErrorCode } from '../../contracts/errors.ts';
import { RECORD_SKIPPED } from '../../contracts/notices.ts';
import type { FeedEvent } from '../core/feed-event.ts';
import type { Frame, Framer } from '../core/sink-parts.ts';
import { jsonToMsgpack } from './json-msgpack.ts';
import { wsMessages } from './messages.ts';

/** What the framer needs of its connection: the encoding (fixed by the first subscribe). */
export type FramerState = { encoding: Encoding; lagged: boolean };

/** An event's frame for json connections: its stored JSON's UTF-8 bytes, as stored (no parse). */
export function jsonEventFrame(ev: FeedEvent): Frame {
  let f = ev.wire['ws-json'] as Buffer | undefined;
  if (f === undefined) {
    f = Buffer.from(ev.json);
    ev.wire['ws-json'] = f;
  }
  return f;
}

/** The msgpack frame of an event, or the `record_skipped` notice of a stored record that is not JSON. */
export function msgpackEventFrame(ev: FeedEvent): Frame {
  let f = ev.wire['ws-msgpack'] as Frame | undefined;
  if (f === undefined) {
    // Transcoded in one scan, byte for byte what JSON.parse + msgpackr gave (json-msgpack.ts).
    const packed = jsonToMsgpack(ev.json);
    f = packed === null ? skippedFrame(ev) : packed;
    ev.wire['ws-msgpack'] = f;
  }
  return f;
}

/** A control message (`notice`, `warning`, ...): its JSON text, a message of its own. */
export const controlFrame = (m: Record<string, unknown>): string => JSON.stringify(m);

/**
 * A stored record on an event subject that is not an event (a raw publish, not a producer's) holds
 * no market data: the copy loses nothing by going past it, whereas ending the connection (1011)
 * would end every resume at the same record, so one bad write would stop every client of that coin
 * until an operator deleted it. It is skipped, never silently: this message takes its place, in
 * order: the `record_skipped` notice (as on gRPC), its sequence as `resumed_after`, with its subject
 * (`feed: "own"` when it is on the account's own stream, `OWN`).
 */
function skippedFrame(ev: FeedEvent): string {
  return controlFrame({
    type: 'notice',
    code: RECORD_SKIPPED,
    resumed_after: ev.seq,
    coin: ev.symbol,
    source: ev.source,
    event_type: ev.eventType,
    ...(ev.owner !== null ? { feed: 'own' } : {}),
    message: `stored record ${ev.seq} is not a valid event; skipped`,
  });
}

/** Bytes of the smallest data message that can carry event frame `f`: alone in its array. */
const dataFrameBytes = (f: Frame, encoding: Encoding): number => f.length + (encoding === 'msgpack' ? 1 : 2); // an array-of-one header, or `[` … `]`

/**
 * `undeliverable` is called, in place of queueing, with an event whose frame passes the limit and
 * the bytes it needs; it must end the connection (see the file comment).
 */
export function wsFramer(
  state: FramerState,
  onLag: () => void,
  undeliverable: (ev: FeedEvent, bytes: number) => void,
): Framer {
  return {
    preamble: () => '',
    event(ev) {
      const f = state.encoding === 'msgpack' ? msgpackEventFrame(ev) : jsonEventFrame(ev);
      // A `record_skipped` notice (a string) takes an event's place: it is no data message.
      const bytes = typeof f === 'string' ? 0 : dataFrameBytes(f, state.encoding);
      if (bytes <= MAX_FRAME_BYTES) return f;
      undeliverable(ev, bytes);
      return '';
    },
    notice: (n) => controlFrame({ type: 'notice', ...n }),
    warning(code: ErrorCode, message: string | undefined, extra: Record<string, unknown>): Frame {
      // The sink warns `upstream_lag` only once a live consumer has overflowed its bound: for an
      // exact copy that is the end (1013), never conflated events (see connection.ts).
      if (code === 'upstream_lag') {
        state.lagged = true;
        queueMicrotask(onLag);
      }
      return controlFrame({ type: 'warning', code, message, ...extra });
    },
    heartbeat: () => null,
    end: () => '',
    // Always the message list: a wire sends it as it is, shared or not.
    join: (frames) => wsMessages(frames, state.encoding),
  };
}
