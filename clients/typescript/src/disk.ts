/**
 * `@mdp/client/disk`: `streamDisk()`, the unified stream's iterator over the disk-sync WebSocket
 * (`{disk_url}/`). Same items, same `Position`, same backoff and same exactly-once rule as
 * `stream()` (resuming-stream.ts); every connection subscribes with `from_seq` = the last platform
 * sequence yielded and, once one of the account's own events (`own: true`) was yielded,
 * `from_own_seq` = the last own sequence. Batches arrive as a JSON text array or a MessagePack binary array (`encoding`). A replay
 * by time goes as `from_time`, `to_time` (Unix ms) and `speed` in every subscribe, next to
 * `from_seq` (which wins on the server); its `replay_complete` notice ends the iterator before the
 * edge's close 1000.
 *
 * Closes (disk-closes.ts): shutdown, overload, heartbeat, NATS and maintenance closes and a lost
 * connection reconnect; a bad, revoked or under-tier key, a refused subscription, or another
 * connection holding the key end the iterator with the `error` frame's code and request id. One
 * exception, on purpose: 4008 just after this iterator's own connection dropped is most likely
 * that connection's lease, which the edge frees on close or within its TTL (45 s), so it is
 * retried with backoff for `duplicateGraceMs` after the drop; only then it ends the iterator.
 *
 * Liveness: the client sends `{"op":"ping"}` every `pingIntervalMs` (the browser WebSocket cannot
 * see protocol pings), so a quiet stream still gets `pong` frames, and no frame for
 * `idleTimeoutMs` counts as a cut connection.
 */

import type { EventType } from '@mdp/contracts/events';
import { unpack } from 'msgpackr/unpack';
import { closeAction, DUPLICATE_CONNECTION } from './disk-closes.ts';
import { type DiskSocket, type OpenSocket, openSocket } from './disk-socket.ts';
import { MdpError, type MdpErrorCode } from './errors.ts';
import type { ReplayWindow } from './replay-window.ts';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type Ended,
  type Endpoints,
  endpointList,
  type ResumingOptions,
  ResumingStream,
  type WireItem,
  watchIdle,
} from './resuming-stream.ts';
import type {
  AnyStreamEvent,
  Position,
  StreamEvent,
  StreamEventType,
  StreamFilters,
  StreamNotice,
  StreamWarning,
} from './stream-types.ts';

/** `T`: the event types selected (market events by default; derived kinds type the events as bars or snapshots). */
export type DiskStreamOptions<T extends StreamEventType = EventType> = StreamFilters<T> &
  ResumingOptions & {
    /** The disk-sync edge, e.g. `wss://us.example.com:8082` (local `ws://127.0.0.1:8082`), or several in failover order (resuming-stream.ts `Endpoints`). */
    url: Endpoints;
    /** API key: the `x-api-key` header with `ws`, `?api_key=` with a global WebSocket. */
    key: string;
    /** Batches as JSON text (default) or MessagePack binary frames. */
    encoding?: 'json' | 'msgpack';
    /** Client pings, ms. Default 15 s. */
    pingIntervalMs?: number;
    /** How long after a drop a 4008 (duplicate connection) is taken for our own lease. Default 60 s. */
    duplicateGraceMs?: number;
    /** The WebSocket to use (default: global WebSocket, else `ws`). */
    openSocket?: OpenSocket;
  };

const DEFAULT_PING_INTERVAL_MS = 15_000;
const DEFAULT_DUPLICATE_GRACE_MS = 60_000;
/** Frames queued before `ws` stops reading (the edge then sees a slow consumer: 1013, resumed). */
const PAUSE_AT_FRAMES = 32;
const RESUME_AT_FRAMES = 8;
const SUBSCRIPTION_ID = 'mdp-client';

type Control = { type: string; [field: string]: unknown };
type Frame =
  | { kind: 'open' }
  | { kind: 'data'; data: string | Uint8Array }
  | { kind: 'close'; code: number; reason: string };

/** Across the connections of one iterator: when the last subscribed connection was lost. */
type DiskState = { lostAt: number | null };

/**
 * A batch's items; `startAfter` (the `subscribed` frame's `after_seq`, when the iterator had no
 * platform position) goes with the first event as its position, so an own event coming before
 * any platform event leaves a position to resume both from.
 */
function eventsOf(batch: unknown, startAfter: Position | null): WireItem[] {
  const items: WireItem[] = (batch as AnyStreamEvent[]).map((event) => ({
    type: 'event',
    seq: event.seq,
    event,
  }));
  const first = items[0];
  if (startAfter !== null && first?.type === 'event') first.at = { seq: startAfter };
  return items;
}

function controlItem(c: Control): WireItem | null {
  const { type, id: _id, ...body } = c;
  if (type === 'notice') return { type: 'notice', notice: body as StreamNotice };
  if (type === 'warning')
    return { type: 'warning', warning: { request_id: '', ...body, terminal: false } as StreamWarning };
  return null;
}

function endedOf(
  close: { code: number; reason: string },
  errorFrame: Control | null,
  state: DiskState,
  graceMs: number,
): Ended {
  const action = closeAction(close.code);
  const framed = errorFrame !== null && errorFrame.close_code === close.code ? errorFrame : null;
  const code = (
    !action.retry && typeof framed?.code === 'string' ? framed.code : action.code
  ) as MdpErrorCode;
  const message =
    (typeof framed?.message === 'string' && framed.message) || close.reason || `closed with ${close.code}`;
  const error = new MdpError(code, message, {
    requestId: typeof framed?.request_id === 'string' ? framed.request_id : null,
    details: { close_code: close.code },
  });
  const ownLease =
    close.code === DUPLICATE_CONNECTION && state.lostAt !== null && Date.now() - state.lostAt < graceMs;
  return { retry: action.retry || ownLease, error };
}

/** One disk-sync connection subscribed after `position` (and over `window`): its items, then how it ended. */
async function* connectDisk(
  opts: DiskStreamOptions<StreamEventType>,
  state: DiskState,
  position: Position | null,
  signal: AbortSignal,
  window: ReplayWindow,
  ownPosition: Position | null,
  url: string,
): AsyncGenerator<readonly WireItem[], Ended> {
  const frames: Frame[] = [];
  let wake: (() => void) | null = null;
  let socket: DiskSocket | null = null;
  let paused = false;
  const push = (f: Frame) => {
    frames.push(f);
    if (!paused && frames.length >= PAUSE_AT_FRAMES && socket?.pause) {
      socket.pause();
      paused = true;
    }
    wake?.();
    wake = null;
  };
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  // Ends this connection at once, without waiting for a close handshake over a dead network.
  const idle = watchIdle(idleMs, () =>
    push({ kind: 'close', code: 1006, reason: `no frame for ${idleMs} ms` }),
  );
  const onAbort = () => push({ kind: 'close', code: 1000, reason: 'closed by the client' });
  signal.addEventListener('abort', onAbort, { once: true });
  let pinger: ReturnType<typeof setInterval> | undefined;
  let subscribed = false;
  let startAfter: Position | null = null;
  let errorFrame: Control | null = null;
  try {
    socket = await (opts.openSocket ?? openSocket)(url, opts.key, {
      open: () => push({ kind: 'open' }),
      message: (data) => push({ kind: 'data', data }),
      close: (code, reason) => push({ kind: 'close', code, reason }),
    });
    for (;;) {
      while (frames.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      const f = frames.shift() as Frame;
      if (paused && frames.length <= RESUME_AT_FRAMES) {
        paused = false;
        socket.resume?.();
      }
      if (f.kind === 'close')
        return endedOf(f, errorFrame, state, opts.duplicateGraceMs ?? DEFAULT_DUPLICATE_GRACE_MS);
      idle.touch();
      if (f.kind === 'open') {
        socket.send(JSON.stringify(subscribeMessage(opts, position, window, ownPosition)));
        const s = socket;
        pinger = setInterval(() => s.send('{"op":"ping"}'), opts.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS);
        continue;
      }
      if (typeof f.data !== 'string' || f.data.startsWith('[')) {
        const items = eventsOf(typeof f.data === 'string' ? JSON.parse(f.data) : unpack(f.data), startAfter);
        if (items.length > 0) startAfter = null;
        yield items;
        continue;
      }
      const control = JSON.parse(f.data) as Control;
      if (control.type === 'subscribed') {
        subscribed = true;
        if (position === null && typeof control.after_seq === 'number') startAfter = control.after_seq;
      } else if (control.type === 'error') errorFrame = control;
      const item = controlItem(control);
      if (item) yield [item];
    }
  } finally {
    if (subscribed) state.lostAt = Date.now();
    idle.stop();
    clearInterval(pinger);
    signal.removeEventListener('abort', onAbort);
    socket?.close();
  }
}

function subscribeMessage(
  opts: DiskStreamOptions<StreamEventType>,
  position: Position | null,
  window: ReplayWindow,
  ownPosition: Position | null = null,
): Record<string, unknown> {
  return {
    op: 'subscribe',
    id: SUBSCRIPTION_ID,
    ...(opts.coins?.length ? { coins: opts.coins } : {}),
    ...(opts.eventTypes?.length ? { event_types: opts.eventTypes } : {}),
    ...(opts.sources?.length ? { sources: opts.sources } : {}),
    ...(position !== null ? { from_seq: position } : {}),
    // The server takes an own position only with a platform one.
    ...(position !== null && ownPosition !== null ? { from_own_seq: ownPosition } : {}),
    ...(window.fromMs !== undefined ? { from_time: window.fromMs } : {}),
    ...(window.toMs !== undefined ? { to_time: window.toMs } : {}),
    ...(window.speed !== undefined ? { speed: window.speed } : {}),
    encoding: opts.encoding ?? 'json',
  };
}

/**
 * The unified stream over the disk-sync WebSocket, as an async iterator that resumes on its own;
 * its events typed by `eventTypes` (market events by default). The last signature is the market
 * one, so `ReturnType<typeof streamDisk>` stays the market stream's type.
 */
export function streamDisk<T extends StreamEventType = EventType>(
  opts: DiskStreamOptions<T>,
): ResumingStream<StreamEvent<T>>;
export function streamDisk(opts: DiskStreamOptions): ResumingStream;
export function streamDisk(opts: DiskStreamOptions<StreamEventType>): ResumingStream<AnyStreamEvent> {
  const state: DiskState = { lostAt: null };
  return new ResumingStream<AnyStreamEvent>(
    opts,
    (position, signal, window, own, url) => connectDisk(opts, state, position, signal, window, own, url),
    undefined,
    endpointList(opts.url),
  );
}

export { type DiskSocket, type OpenSocket, openSocket, type SocketHandlers } from './disk-socket.ts';
export { formatPosition, isOwn, parsePosition } from './own-events.ts';
export { ResumingStream } from './resuming-stream.ts';
export type * from './stream-types.ts';
