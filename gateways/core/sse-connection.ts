/**
 * One SSE client: frames queue in a bounded OutboundQueue and are written once per event-loop
 * turn (Flusher), respecting `write() === false` / `drain`. Slow-client policy: backlog over the
 * bound → book frames conflated and a non-terminal `upstream_lag`; still too large → terminal
 * `reconnect` and close, so the client resumes from JetStream with Last-Event-ID.
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type ErrorCode, sseErrorData } from '../../contracts/errors.ts';
import { type FeedEvent, nowNs } from './feed-event.ts';
import type { Flusher } from './flusher.ts';
import { OutboundQueue } from './outbound-queue.ts';
import type { FeedNotice, FeedSink } from './replay-source.ts';

export type SseConnectionOptions = {
  requestId: string;
  retryMs: number;
  maxBacklogBytes: number;
  closeGraceMs: number;
  /** Identifies the client's selection: clients with equal keys share encoded chunks (see Flusher). */
  selectionKey?: string;
  /** Called with the in-gateway latency (ns) of each event as it is written (benchmarks). */
  onEventWritten?: (latencyNs: number) => void;
};

/** Text of the non-terminal `upstream_lag` warning. */
const LAG_MESSAGE = 'client is reading slower than events arrive; book updates conflated';
/** Backlog under which a history reader may go on (and over which it waits for a flush). */
const LOW_WATER = 64 * 1024;
/** Unsent bytes the socket may hold before the connection counts as blocked. */
const SOCKET_BUFFER = 256 * 1024;

export class SseConnection implements FeedSink {
  private readonly queue: OutboundQueue;
  private readonly pendingLatency: number[] = [];
  private opened = false;
  private blocked = false;
  private lagging = false;
  private waiters: (() => void)[] = [];
  closed = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly opts: SseConnectionOptions,
    private readonly flusher: Flusher,
  ) {
    this.queue = new OutboundQueue(opts.maxBacklogBytes);
    res.on('close', () => this.markClosed());
  }

  /** Sends the status line, headers and `retry:`; queued frames follow on the next flush. */
  open(extraHeaders: Record<string, string> = {}): void {
    this.res.writeHead(200, {
      ...extraHeaders,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': this.opts.requestId,
    });
    this.res.socket?.setNoDelay(true);
    this.res.write(`retry: ${this.opts.retryMs}\n\n`);
    this.opened = true;
    this.flusher.schedule(this);
  }

  event(ev: FeedEvent): void {
    ev.wire.sse ??= `id: ${ev.seq}\ndata: ${ev.json}\n\n`;
    if (this.opts.onEventWritten) this.pendingLatency.push(ev.receivedAtNs);
    this.enqueue(ev.wire.sse, ev.eventType === 'book' ? ev.symbol : null, ev.seq);
  }

  notice(n: FeedNotice | Record<string, unknown>): void {
    this.enqueue(`event: notice\ndata: ${JSON.stringify(n)}\n\n`);
  }

  /** A non-terminal error event (coin_not_found, feed_stale, upstream_lag). */
  warn(code: ErrorCode, message?: string, extra: Record<string, unknown> = {}): void {
    this.enqueue(this.errorFrame(code, message, extra));
  }

  feedStale(coin: string, silentMs: number): void {
    this.warn('feed_stale', `no ${coin} events for ${Math.round(silentMs / 1000)} s`, { coin });
  }

  feedRecovered(coin: string): void {
    this.notice({ code: 'feed_recovered', message: `${coin} events are flowing again`, coin });
  }

  heartbeat(): void {
    if (this.queue.length === 0) this.enqueue(': hb\n\n');
  }

  get backlogBytes(): number {
    return this.queue.bytes;
  }

  ready(): Promise<void> | null {
    if (this.closed || (!this.blocked && this.queue.bytes < LOW_WATER)) return null;
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Writes a terminal error event (after any pending upstream_lag) and closes. */
  terminate(code: ErrorCode, message?: string): void {
    if (this.closed) return;
    // An upstream_lag notice still queued goes out before the terminal error, never silently dropped.
    const lag = this.lagFrameQueued ? this.errorFrame('upstream_lag', LAG_MESSAGE) : '';
    this.queue.clear();
    const final = lag + this.errorFrame(code, message);
    if (!this.opened) this.open();
    this.res.end(final);
    this.markClosed();
    if (this.opts.closeGraceMs >= 0) setTimeout(() => this.res.destroy(), this.opts.closeGraceMs).unref();
  }

  flush(): void {
    if (this.closed || this.blocked || !this.opened || this.queue.length === 0) return;
    const signature = this.opts.selectionKey === undefined ? null : this.queue.signature();
    const chunk =
      signature === null
        ? this.queue.drain()
        : this.flusher.shared(`${this.opts.selectionKey}|${signature}`, () => this.queue.drain());
    this.queue.clear();
    this.lagFrameQueued = false;
    this.res.write(chunk);
    this.recordLatency();
    if (this.ending) {
      this.res.end();
      this.markClosed();
      return;
    }
    // Blocked only when the socket holds more than SOCKET_BUFFER unsent bytes (Node's own 16 KiB
    // mark would stall every catch-up flush); `drain` fires once it is empty again.
    if (this.res.writableLength > SOCKET_BUFFER) {
      this.blocked = true;
      this.res.once('drain', this.onDrain);
      return;
    }
    this.lagging = false;
    this.wake();
  }

  private lagFrameQueued = false;
  private ending = false;

  /** A last `event: end` message after everything queued, then a normal close (finite streams). */
  finish(data: Record<string, unknown>): void {
    if (this.closed) return;
    this.enqueue(`event: end\ndata: ${JSON.stringify(data)}\n\n`);
    this.ending = true;
  }

  private enqueue(text: string, conflationKey: string | null = null, seq?: number): void {
    if (this.closed) return;
    // The slow-client policy applies to real backpressure only: while the socket accepts writes,
    // the queue empties on the next flush, however many events this turn fanned out.
    if (!this.queue.push(text, conflationKey, seq) && this.blocked) this.overflow();
    if (!this.closed && !this.blocked && this.opened) this.flusher.schedule(this);
  }

  private overflow(): void {
    this.queue.conflate();
    this.pendingLatency.length = 0;
    if (!this.lagging) {
      this.lagging = true;
      this.lagFrameQueued = true;
      this.queue.push(this.errorFrame('upstream_lag', LAG_MESSAGE));
    }
    if (this.queue.bytes > this.queue.maxBytes * 0.75) {
      this.terminate('reconnect', 'client too slow: reconnect with Last-Event-ID to resume from the log');
    }
  }

  private readonly onDrain = (): void => {
    this.blocked = false;
    if (this.queue.length > 0) this.flush();
    else this.wake();
  };

  private errorFrame(code: ErrorCode, message?: string, extra: Record<string, unknown> = {}): string {
    const data = { ...sseErrorData(new ApiError(code, message), this.opts.requestId), ...extra };
    return `event: error\ndata: ${JSON.stringify(data)}\n\n`;
  }

  private recordLatency(): void {
    const cb = this.opts.onEventWritten;
    if (!cb || this.pendingLatency.length === 0) return;
    const t = nowNs();
    for (const r of this.pendingLatency) cb(t - r);
    this.pendingLatency.length = 0;
  }

  private wake(): void {
    if (this.blocked || this.queue.bytes >= LOW_WATER) return;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }

  private markClosed(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
    this.onClosed?.();
  }

  onClosed: (() => void) | null = null;
}
