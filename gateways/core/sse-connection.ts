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
import type { Framer, Wire } from './sink-parts.ts';

export type SseConnectionOptions = BufferedSinkOptions & { requestId: string; retryMs: number };

/** SSE frames; errors carry the spec's data for the code with the request id. */
export function sseFramer(requestId: string, retryMs: number): Framer {
  const error = (code: ErrorCode, message: string | undefined, extra: Record<string, unknown>) =>
    `event: error\ndata: ${JSON.stringify({ ...sseErrorData(new ApiError(code, message), requestId), ...extra })}\n\n`;
  return {
    preamble: () => `retry: ${retryMs}\n\n`,
    event(ev: FeedEvent): string {
      if (ev.wire.sse === undefined) ev.wire.sse = `id: ${ev.seq}\ndata: ${ev.json}\n\n`;
      return ev.wire.sse;
    },
    notice: (n) => `event: notice\ndata: ${JSON.stringify(n)}\n\n`,
    warning: error,
    terminal: (code, message) => error(code, message, {}),
    heartbeat: () => ': hb\n\n',
    end: (data) => `event: end\ndata: ${JSON.stringify(data)}\n\n`,
  };
}

/** A node:http response as the sink's wire. */
export function httpResponseWire(res: ServerResponse, requestId: string): Wire {
  return {
    open(headers, preamble) {
      res.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': requestId,
      });
      res.socket?.setNoDelay(true);
      if (preamble) res.write(preamble);
    },
    write: (chunk) => void res.write(chunk),
    get bufferedBytes() {
      // The response's own buffer plus what its socket has not handed to the kernel yet.
      return res.writableLength;
    },
    onceDrain: (cb) => void res.once('drain', cb),
    end: (last) => void (last === undefined ? res.end() : res.end(last)),
    destroy: () => void res.destroy(),
    onClose: (cb) => void res.once('close', cb),
  };
}

/** One SSE client. */
export class SseConnection extends BufferedSink {
  constructor(res: ServerResponse, opts: SseConnectionOptions, flusher: Flusher) {
    super(sseFramer(opts.requestId, opts.retryMs), httpResponseWire(res, opts.requestId), flusher, opts);
  }
}
