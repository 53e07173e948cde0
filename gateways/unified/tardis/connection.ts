/**
 * A tardis-compatible stream on the buffered sink (bounded queue, backpressure, the registry's
 * revocation and shutdown): a framer that writes each event as its normalized messages
 * (normalized.ts), one JSON document a line, and two wires: the HTTP response of
 * `/replay-normalized` (NDJSON) and a WebSocket of `/ws-*-normalized` (one message a line).
 * Our notices and warnings, which tardis has no type for, are lines of `type` `notice` and
 * `error`; a terminal error is an `error` line, then the end (HTTP) or a close (WebSocket 1011,
 * or 4000 + the catalogue's HTTP status for a refusal).
 */
import type { ServerResponse } from 'node:http';
import type { WebSocket } from 'ws';
import { ApiError, ERROR_CATALOGUE, type ErrorCode, publicMessage } from '../../../contracts/errors.ts';
import { BufferedSink } from '../../core/buffered-sink.ts';
import { DrainGate } from '../../core/drain-gate.ts';
import type { Flusher } from '../../core/flusher.ts';
import type { Framer, Terminal, Wire } from '../../core/sink-parts.ts';
import { httpResponseWire } from '../../core/sse-connection.ts';
import type { TardisMapper } from './normalized.ts';

const errorLine = (requestId: string, code: ErrorCode, message?: string) =>
  `${JSON.stringify({ type: 'error', code, message: message ?? publicMessage(new ApiError(code)), request_id: requestId })}\n`;

function tardisFramer(mapper: TardisMapper, requestId: string): Framer {
  return {
    preamble: () => '',
    event(ev) {
      const lines = mapper.map(ev);
      return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
    },
    notice: (n) => `${JSON.stringify({ type: 'notice', ...n })}\n`,
    warning: (code, message) => errorLine(requestId, code, message),
    heartbeat: () => null,
    end: () => '',
    join: (frames) => (frames as readonly string[]).join(''),
  };
}

/** The close code of a refusal: 4000 + its HTTP status (4401, 4403, 4429, …), 1011 for a server error. */
export function wsCloseCode(code: ErrorCode): number {
  const status = ERROR_CATALOGUE[code].http;
  return status >= 500 ? 1011 : 4000 + status;
}

class WsLinesWire implements Wire {
  private sending = 0;
  private readonly drain = new DrainGate(() => (this.sending === 0 ? 0 : this.ws.bufferedAmount));

  constructor(
    private readonly ws: WebSocket,
    private readonly requestId: string,
  ) {}

  open(): void {}

  write(chunk: string | Buffer | Uint8Array): void {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    for (let at = 0; at < text.length; ) {
      const nl = text.indexOf('\n', at);
      const end = nl < 0 ? text.length : nl;
      if (end > at) this.send(text.slice(at, end));
      at = end + 1;
    }
  }

  private send(line: string): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.sending++;
    this.ws.send(line, () => {
      this.sending--;
      this.drain.written();
    });
  }

  get bufferedBytes(): number {
    return this.ws.bufferedAmount;
  }

  onceDrain(cb: () => void): void {
    this.drain.onceDrain(cb);
  }

  end(last?: string | Buffer | Uint8Array, terminal?: Terminal): void {
    if (last !== undefined) this.write(last);
    if (terminal) {
      this.write(errorLine(this.requestId, terminal.code, terminal.message));
      this.close(wsCloseCode(terminal.code), terminal.code);
    } else this.close(1000, 'done');
  }

  close(code: number, reason: string): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(code, reason.slice(0, 120));
  }

  destroy(): void {
    this.ws.terminate();
  }

  onClose(cb: () => void): void {
    this.ws.once('close', () => cb());
  }
}

export type TardisSinkOptions = { requestId: string; maxBacklogBytes: number; closeGraceMs: number };

export const ndjsonConnection = (
  res: ServerResponse,
  mapper: TardisMapper,
  flusher: Flusher,
  o: TardisSinkOptions,
): BufferedSink =>
  new BufferedSink(
    tardisFramer(mapper, o.requestId),
    httpResponseWire(res, o.requestId, 'application/x-ndjson; charset=utf-8', (t) =>
      errorLine(o.requestId, t.code, t.message),
    ),
    flusher,
    o,
  );

export const wsConnection = (
  ws: WebSocket,
  mapper: TardisMapper,
  flusher: Flusher,
  o: TardisSinkOptions,
): BufferedSink =>
  new BufferedSink(tardisFramer(mapper, o.requestId), new WsLinesWire(ws, o.requestId), flusher, o);
