/**
 * `stream()`: the unified stream as an async iterator that reconnects on its own. It follows the
 * spec's reconnection rule (the `retry:` field, exponential backoff with jitter per consecutive
 * failure, `Last-Event-ID` = the last id received: `N`, or `N:K` once an own event came), drops any sequence it has already
 * yielded, moves its position where a `position_*` notice says the server resumed, yields notices
 * and non-terminal warnings as typed values, and ends with a typed MdpError on a terminal
 * authentication or authorization error (or a request the server will never accept). A replay by
 * time goes as `from`, `to` (Unix ms) and `speed` on every connection, next to `Last-Event-ID`.
 *
 * fetch + a streaming SSE parser, no Node-only import: it runs in Node 20+ and in browsers.
 */
import type { SseCode } from '@mdp/contracts/errors';
import type { EventType } from '@mdp/contracts/events';
import { DEFAULT_RETRY_MS } from './backoff.ts';
import { errorFromResponse, MdpError, networkError } from './errors.ts';
import { isOwn } from './own-events.ts';
import type { ReplayWindow } from './replay-window.ts';
import {
  DEFAULT_IDLE_TIMEOUT_MS,
  type Ended,
  endpointList,
  ResumingStream,
  type WireItem,
  watchIdle,
} from './resuming-stream.ts';
import { type SseMessage, SseParser } from './sse-parser.ts';
import type {
  AnyStreamEvent,
  Position,
  StreamEvent,
  StreamEventType,
  StreamNotice,
  StreamOptions,
  StreamWarning,
} from './stream-types.ts';

export const STREAM_PATH = '/api/v1/unified/stream';

/** Mid-stream codes after which reconnecting cannot help: the key or its plan must change. */
const STOP_SSE_CODES: ReadonlySet<string> = new Set<SseCode>([
  'auth_failed',
  'auth_expired',
  'tier_restricted',
]);

/** Statuses worth another attempt (the spec's "Retry" / "Wait" actions); any other 4xx ends the iterator. */
const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * The request URL (the filters and the replay window are fixed for the iterator's life; the
 * position travels as a header).
 */
export function streamUrl(
  opts: Pick<StreamOptions<StreamEventType>, 'url' | 'coins' | 'eventTypes' | 'sources'>,
  window: ReplayWindow = {},
): string {
  const base = (typeof opts.url === 'string' ? opts.url : (opts.url[0] ?? '')).replace(/\/+$/, '');
  const url = new URL(base.endsWith(STREAM_PATH) ? base : `${base}${STREAM_PATH}`);
  if (opts.coins?.length) url.searchParams.set('coin', opts.coins.join(','));
  if (opts.eventTypes?.length) url.searchParams.set('event_type', opts.eventTypes.join(','));
  if (opts.sources?.length) url.searchParams.set('source', opts.sources.join(','));
  if (window.fromMs !== undefined) url.searchParams.set('from', String(window.fromMs));
  if (window.toMs !== undefined) url.searchParams.set('to', String(window.toMs));
  if (window.speed !== undefined) url.searchParams.set('speed', String(window.speed));
  return url.toString();
}

/**
 * The unified stream as an async iterator: the reconnecting loop (position, duplicates, backoff)
 * is the one of every transport (resuming-stream.ts); this class adds the SSE connection and the
 * server's `retry:` as the first wait.
 */
export class UnifiedStream<E extends AnyStreamEvent = StreamEvent> extends ResumingStream<E> {
  constructor(opts: StreamOptions<StreamEventType>) {
    const parser = new SseParser();
    super(
      opts,
      (position, signal, window, own, endpoint) =>
        connectSse(
          opts,
          streamUrl({ ...opts, url: endpoint }, window),
          parser,
          lastEventId(position, own),
          signal,
        ),
      () => parser.retryMs ?? DEFAULT_RETRY_MS,
      endpointList(opts.url),
    );
  }
}

/**
 * The Last-Event-ID of a position: `N`, `N:K` with an own part. Null without a platform part (the
 * server takes an own position only with one): the stream then starts live.
 */
export function lastEventId(position: Position | null, own: Position | null): string | null {
  if (position === null) return null;
  return own === null ? String(position) : `${position}:${own}`;
}

/** One SSE connection after `position` (its Last-Event-ID): its items, then how it ended. */
async function* connectSse(
  opts: StreamOptions<StreamEventType>,
  url: string,
  parser: SseParser,
  position: string | null,
  signal: AbortSignal,
): AsyncGenerator<readonly WireItem[], Ended> {
  const conn = new AbortController();
  const abort = () => conn.abort();
  signal.addEventListener('abort', abort, { once: true });
  try {
    let res: Response;
    try {
      res = await fetchStream(opts, url, position, conn.signal);
    } catch (err) {
      return { retry: true, error: networkError(err) };
    }
    if (res.status !== 200 || !res.body) {
      const error = await errorFromResponse(res);
      return { retry: retryableStatus(res.status), error };
    }
    // One await per chunk, its items yielded as one batch: the hot path of the client.
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const messages: SseMessage[] = [];
    const idle = watchIdle(opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, abort);
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        idle.touch();
        messages.length = 0;
        parser.feed(decoder.decode(chunk.value, { stream: true }), messages);
        const items: WireItem[] = [];
        for (const m of messages) {
          const item = interpret(m);
          if (item === null) continue;
          if (item instanceof MdpError) {
            if (items.length > 0) yield items;
            return { retry: !STOP_SSE_CODES.has(item.code), error: item };
          }
          items.push(item);
        }
        if (items.length > 0) yield items;
      }
    } catch (err) {
      // A cut, an idle abort, or a message that does not parse: the next connection resumes.
      return { retry: true, error: networkError(err) };
    } finally {
      idle.stop();
      reader.cancel().catch(() => {});
    }
    return {
      retry: true,
      error: new MdpError('network_error', 'the server closed the stream', { status: 200 }),
    };
  } finally {
    signal.removeEventListener('abort', abort);
    conn.abort();
  }
}

function fetchStream(
  opts: StreamOptions<StreamEventType>,
  url: string,
  position: string | null,
  signal: AbortSignal,
): Promise<Response> {
  const doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
  const headers: Record<string, string> = { accept: 'text/event-stream', 'x-api-key': opts.key };
  if (position !== null) headers['last-event-id'] = position;
  return doFetch(url, { headers, signal, cache: 'no-store' });
}

/**
 * One SSE message as an item: null for comments and unknown events; an MdpError for a terminal
 * `event: error` (the server closes the stream after it).
 */
function interpret(m: SseMessage): WireItem | MdpError | null {
  if (m.event === 'message') {
    const event = JSON.parse(m.data) as AnyStreamEvent;
    // `N:K`: the stream's two positions after this event (its `seq` is the event's own number).
    const colon = m.id.indexOf(':');
    if (colon < 0)
      return { type: 'event', seq: m.id === '' || isOwn(event) ? event.seq : Number(m.id), event };
    const at = { seq: Number(m.id.slice(0, colon)), own_seq: Number(m.id.slice(colon + 1)) };
    return { type: 'event', seq: event.seq, event, at };
  }
  if (m.event === 'notice') return { type: 'notice', notice: JSON.parse(m.data) as StreamNotice };
  if (m.event !== 'error') return null;
  const data = JSON.parse(m.data) as
    | StreamWarning
    | { code: SseCode; message: string; request_id: string; terminal: true };
  if (!data.terminal) return { type: 'warning', warning: data as StreamWarning };
  return new MdpError(data.code, data.message, { requestId: data.request_id, terminal: true });
}

/**
 * The unified stream as an async iterator; see UnifiedStream. Its events are typed by
 * `eventTypes`: market events by default, bars for `['bar_1m']`, snapshots for
 * `['book_snapshot_10_1s']`. The last signature is the market one, so `ReturnType<typeof stream>`
 * stays the market stream's type.
 */
export function stream<T extends StreamEventType = EventType>(
  opts: StreamOptions<T>,
): UnifiedStream<StreamEvent<T>>;
export function stream(opts: StreamOptions): UnifiedStream;
export function stream(opts: StreamOptions<StreamEventType>): UnifiedStream<AnyStreamEvent> {
  return new UnifiedStream<AnyStreamEvent>(opts);
}
