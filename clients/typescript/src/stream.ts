/**
 * `stream()`: the unified stream as an async iterator that reconnects on its own. It follows the
 * spec's reconnection rule (the `retry:` field, exponential backoff with jitter per consecutive
 * failure, `Last-Event-ID` = the last sequence received), drops any sequence it has already
 * yielded, moves its position where a `position_*` notice says the server resumed, yields notices
 * and non-terminal warnings as typed values, and ends with a typed MdpError on a terminal
 * authentication or authorization error (or a request the server will never accept).
 *
 * fetch + a streaming SSE parser, no Node-only import: it runs in Node 20+ and in browsers.
 */
import type { SseCode } from '../../../contracts/errors.ts';
import { DEFAULT_RETRY_MS, reconnectDelay, sleep } from './backoff.ts';
import { errorFromResponse, isMdpError, MdpError, networkError } from './errors.ts';
import { type SseMessage, SseParser } from './sse-parser.ts';
import type {
  Position,
  StreamEvent,
  StreamItem,
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

const DEFAULT_IDLE_TIMEOUT_MS = 45_000;

/** The request URL (the filters are fixed for the iterator's life; the position travels as a header). */
export function streamUrl(opts: Pick<StreamOptions, 'url' | 'coins' | 'eventTypes' | 'sources'>): string {
  const base = opts.url.replace(/\/+$/, '');
  const url = new URL(base.endsWith(STREAM_PATH) ? base : `${base}${STREAM_PATH}`);
  if (opts.coins?.length) url.searchParams.set('coin', opts.coins.join(','));
  if (opts.eventTypes?.length) url.searchParams.set('event_type', opts.eventTypes.join(','));
  if (opts.sources?.length) url.searchParams.set('source', opts.sources.join(','));
  return url.toString();
}

export class UnifiedStream implements AsyncIterable<StreamItem> {
  /** The last sequence yielded (or where a notice moved it): resume from here. Null before any. */
  position: Position | null;
  /** Connections opened so far after the first. */
  reconnects = 0;
  private readonly closer = new AbortController();
  private started = false;

  constructor(private readonly opts: StreamOptions) {
    this.position = opts.from ?? null;
    opts.signal?.addEventListener('abort', () => this.close(), { once: true });
  }

  /** Ends the iterator (the current `for await` finishes normally). */
  close(): void {
    this.closer.abort();
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamItem> {
    if (this.started) throw new Error('a UnifiedStream can be iterated once');
    this.started = true;
    return this.run();
  }

  private async *run(): AsyncGenerator<StreamItem, void, undefined> {
    const url = streamUrl(this.opts);
    const doFetch = this.opts.fetch ?? globalThis.fetch.bind(globalThis);
    const parser = new SseParser();
    const messages: SseMessage[] = [];
    let failures = 0;
    let connections = 0;
    while (!this.closer.signal.aborted) {
      const conn = new AbortController();
      const onClose = () => conn.abort();
      this.closer.signal.addEventListener('abort', onClose, { once: true });
      let cause: MdpError | undefined;
      try {
        if (connections++ > 0) this.reconnects++;
        const res = await this.connect(doFetch, url, conn.signal);
        if (res.status !== 200 || !res.body) {
          cause = await errorFromResponse(res);
          if (!retryableStatus(res.status)) throw cause;
        } else {
          // One await per chunk, one yield per item: the hot path of the client.
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          const idle = this.watchIdle(conn);
          try {
            while (cause === undefined) {
              let chunk: ReadableStreamReadResult<Uint8Array>;
              try {
                chunk = await reader.read();
              } catch (err) {
                cause = networkError(err);
                break;
              }
              if (chunk.done) break;
              idle.touch();
              messages.length = 0;
              parser.feed(decoder.decode(chunk.value, { stream: true }), messages);
              for (const m of messages) {
                const item = this.interpret(m);
                if (item === null) continue;
                if (item instanceof MdpError) {
                  cause = item;
                  break;
                }
                if (item.type === 'event') failures = 0;
                yield item;
              }
            }
          } finally {
            idle.stop();
            reader.cancel().catch(() => {});
          }
          cause ??= new MdpError('network_error', 'the server closed the stream', { status: 200 });
        }
      } catch (err) {
        if (this.closer.signal.aborted) return;
        if (isMdpError(err) && err.code !== 'network_error') throw err;
        cause = isMdpError(err) ? err : networkError(err);
      } finally {
        this.closer.signal.removeEventListener('abort', onClose);
        conn.abort();
      }
      if (this.closer.signal.aborted) return;
      failures++;
      if (this.opts.maxAttempts !== undefined && failures >= this.opts.maxAttempts) throw cause;
      const delayMs = this.delay(parser.retryMs ?? DEFAULT_RETRY_MS, failures, cause);
      yield { type: 'reconnecting', attempt: failures, delayMs, error: cause };
      await sleep(delayMs, this.closer.signal);
    }
  }

  private async connect(doFetch: typeof fetch, url: string, signal: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { accept: 'text/event-stream', 'x-api-key': this.opts.key };
    if (this.position !== null) headers['last-event-id'] = String(this.position);
    try {
      return await doFetch(url, { headers, signal, cache: 'no-store' });
    } catch (err) {
      throw networkError(err);
    }
  }

  /**
   * One SSE message as an item: null for an event already yielded; a terminal error that ends the
   * connection (the iterator reconnects); throws a terminal error that ends the iterator.
   */
  private interpret(m: SseMessage): StreamItem | MdpError | null {
    if (m.event === 'message') {
      const event = JSON.parse(m.data) as StreamEvent;
      const seq = m.id === '' ? event.seq : Number(m.id);
      if (this.position !== null && seq <= this.position) return null; // seen already
      this.position = seq;
      return { type: 'event', seq, event };
    }
    if (m.event === 'notice') {
      const notice = JSON.parse(m.data) as StreamNotice;
      if ('resumed_after' in notice && typeof notice.resumed_after === 'number')
        this.position = notice.resumed_after;
      return { type: 'notice', notice };
    }
    if (m.event !== 'error') return null;
    const data = JSON.parse(m.data) as
      | StreamWarning
      | { code: SseCode; message: string; request_id: string; terminal: true };
    if (!data.terminal) return { type: 'warning', warning: data as StreamWarning };
    const err = new MdpError(data.code, data.message, { requestId: data.request_id, terminal: true });
    if (STOP_SSE_CODES.has(data.code)) throw err;
    return err;
  }

  /** Aborts the connection when no byte arrived for `idleTimeoutMs` (a cut that sent nothing). */
  private watchIdle(conn: AbortController): { touch(): void; stop(): void } {
    const idleMs = this.opts.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    let lastByteAt = Date.now();
    const timer = setInterval(
      () => {
        if (Date.now() - lastByteAt > idleMs) conn.abort();
      },
      Math.max(10, idleMs / 4),
    );
    return { touch: () => (lastByteAt = Date.now()), stop: () => clearInterval(timer) };
  }

  private delay(retryMs: number, failures: number, cause: MdpError): number {
    const opts: Parameters<typeof reconnectDelay>[2] = {};
    if (this.opts.maxDelayMs !== undefined) opts.maxDelayMs = this.opts.maxDelayMs;
    if (this.opts.random) opts.random = this.opts.random;
    if (cause.retryAfterSeconds !== null) opts.retryAfterMs = cause.retryAfterSeconds * 1000;
    return reconnectDelay(retryMs, failures, opts);
  }
}

/** The unified stream as an async iterator; see UnifiedStream. */
export function stream(opts: StreamOptions): UnifiedStream {
  return new UnifiedStream(opts);
}
