/**
 * SSE on the buffered sink: a framer (unnamed `id:`/`data:` messages for events, `event: notice`,
 * `event: error` for warnings and terminal errors, `event: end`, comment heartbeats) and a wire
 * (a node:http response). The slow-client policy is the sink's (buffered-sink.ts).
 */
import type { ServerResponse } from 'node:http';
import { ApiError, type ErrorCode, sseErrorData } from '../../contracts/errors.ts';
import { BufferedSink, type BufferedSinkOptions } from './buffered-sink.ts';
import type { FeedEvent } from './feed-event.ts';
import type { Flusher } from './flusher.ts';
import type { Chunk, Framer, Terminal, Wire } from './sink-parts.ts';

export type SseConnectionOptions = BufferedSinkOptions & { requestId: string; retryMs: number };

/** An `event: error` message: the spec's data for the code with the request id. */
function errorMessage(
  requestId: string,
  code: ErrorCode,
  message: string | undefined,
  extra: Record<string, unknown>,
) {
  return `event: error\ndata: ${JSON.stringify({ ...sseErrorData(new ApiError(code, message), requestId), ...extra })}\n\n`;
}

/**
 * A stream's position as its SSE ids say it (own-feed.ts): `md` the last platform sequence (or the
 * start), `own` the last own sequence once one is known (delivered, or resumed from), else null.
 */
export type SsePosition = { md: number; own: number | null };

/**
 * SSE frames, all text; a shared chunk is encoded to UTF-8 once for every socket it goes to. An
 * event's id is its `seq`, shared by every client, until the stream has an own position: from then
 * on `N:K`, this client's alone.
 */
export function sseFramer(requestId: string, retryMs: number, pos: SsePosition | null = null): Framer {
  return {
    preamble: () => `retry: ${retryMs}\n\n`,
    event(ev: FeedEvent): string {
      if (pos !== null) {
        if (ev.owner !== null) pos.own = ev.seq;
        else pos.md = ev.seq;
        if (pos.own !== null) return `id: ${pos.md}:${pos.own}\ndata: ${ev.json}\n\n`;
      }
      if (ev.wire.sse === undefined) ev.wire.sse = `id: ${ev.seq}\ndata: ${ev.json}\n\n`;
      return ev.wire.sse;
    },
    personal: () => pos?.own != null,
    notice: (n) => `event: notice\ndata: ${JSON.stringify(n)}\n\n`,
    warning: (code, message, extra) => errorMessage(requestId, code, message, extra),
    heartbeat: () => ': hb\n\n',
    end: (data) => `event: end\ndata: ${JSON.stringify(data)}\n\n`,
    join(frames, shared) {
      const text = frames.length === 1 ? (frames[0] as string) : (frames as readonly string[]).join('');
      return shared ? Buffer.from(text) : text;
    },
    concatenates: true,
  };
}

/**
 * A node:http response as the sink's wire (SSE here; NDJSON for the tardis endpoints):
 * `contentType` its type, `terminalText` the last text written for a terminal error. A class:
 * an object literal with a getter gets a hidden class of its own per connection, which keeps
 * the connection's objects past young-generation collections (see jsonrpc/context.ts).
 */
class HttpResponseWire implements Wire {
  constructor(
    private readonly res: ServerResponse,
    private readonly requestId: string,
    private readonly contentType: string,
    private readonly terminalText: (t: Terminal) => string,
  ) {}

  open(headers: Record<string, string>, preamble: string): void {
    this.res.writeHead(200, {
      ...headers,
      'content-type': this.contentType,
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-request-id': this.requestId,
    });
    this.res.socket?.setNoDelay(true);
    if (preamble) this.res.write(preamble);
  }

  write(chunk: Chunk): void {
    this.res.write(chunk);
  }

  /** The response's own buffer plus what its socket has not handed to the kernel yet. */
  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  onceDrain(cb: () => void): void {
    this.res.once('drain', cb);
  }

  end(last?: Chunk, terminal?: Terminal): void {
    if (last !== undefined && last.length > 0) this.res.write(last);
    if (terminal) this.res.end(this.terminalText(terminal));
    else this.res.end();
  }

  destroy(): void {
    this.res.destroy();
  }

  onClose(cb: () => void): void {
    this.res.once('close', cb);
  }
}

export function httpResponseWire(
  res: ServerResponse,
  requestId: string,
  contentType: string,
  terminalText: (t: Terminal) => string,
): Wire {
  return new HttpResponseWire(res, requestId, contentType, terminalText);
}

/** One SSE client; `position` when it may see its account's own events (its ids then follow it). */
export class SseConnection extends BufferedSink {
  constructor(
    res: ServerResponse,
    opts: SseConnectionOptions,
    flusher: Flusher,
    readonly position: SsePosition | null = null,
  ) {
    const wire = httpResponseWire(res, opts.requestId, 'text/event-stream; charset=utf-8', (t) =>
      errorMessage(opts.requestId, t.code, t.message, {}),
    );
    super(sseFramer(opts.requestId, opts.retryMs, position), wire, flusher, opts);
  }
}
