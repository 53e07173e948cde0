/**
 * The buffered sink's Framer for the disk-sync edge (gateways/core/sink-parts.ts). An event's
 * frame is made once per process per encoding and memoised in `ev.wire`: for `json` it is the
 * stored bytes as they are (`ev.json`, no parse); for `msgpack` the event encoded once. Control
 * messages are JSON objects with a `type` (`notice`, `warning`, and `subscribed`, `caught_up`,
 * `pong` sent as notices with their own type).
 */
import { Packr } from 'msgpackr';
import type { Encoding } from '../../contracts/disksync.ts';
import type { ErrorCode } from '../../contracts/errors.ts';
import type { FeedEvent } from '../core/feed-event.ts';
import type { Framer } from '../core/sink-parts.ts';
import { frame, terminalFrame } from './frames.ts';

const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

/** What the framer needs of its connection: the encoding (fixed by the first subscribe). */
export type FramerState = { encoding: Encoding; lagged: boolean };

export function jsonEventFrame(ev: FeedEvent): string {
  let f = ev.wire['ws-json'] as string | undefined;
  if (f === undefined) {
    f = frame('E', ev.json);
    ev.wire['ws-json'] = f;
  }
  return f;
}

export function msgpackEventFrame(ev: FeedEvent): string {
  let f = ev.wire['ws-msgpack'] as string | undefined;
  if (f === undefined) {
    f = frame('E', Buffer.from(packr.pack(JSON.parse(ev.json))).toString('latin1'));
    ev.wire['ws-msgpack'] = f;
  }
  return f;
}

export const controlFrame = (m: Record<string, unknown>): string => frame('C', JSON.stringify(m));

export function wsFramer(state: FramerState, onLag: () => void): Framer {
  return {
    preamble: () => '',
    event: (ev) => (state.encoding === 'msgpack' ? msgpackEventFrame(ev) : jsonEventFrame(ev)),
    notice: (n) => controlFrame({ type: 'notice', ...n }),
    warning(code: ErrorCode, message: string | undefined, extra: Record<string, unknown>): string {
      // The sink warns `upstream_lag` only once a live consumer has overflowed its bound: for an
      // exact copy that is the end (1013), never conflated events (see connection.ts).
      if (code === 'upstream_lag') {
        state.lagged = true;
        queueMicrotask(onLag);
      }
      return controlFrame({ type: 'warning', code, message, ...extra });
    },
    terminal: terminalFrame,
    heartbeat: () => null,
    end: () => '',
  };
}
