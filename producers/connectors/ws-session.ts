/**
 * A venue WebSocket that stays open: after every (re)connect the venue's subscription messages are
 * sent; a lost connection is reopened after the project's retry backoff (platform/backoff.ts
 * RetryBackoff: the first retry at once, then `baseMs · 2^n` up to `maxMs`, with jitter so many
 * connectors do not return together), cleared by the first frame of a working connection. A
 * connection silent for `idleTimeoutMs` (no frame, ping or pong) is treated as dead and reopened.
 * `pause()`/`resume()` stop reading the socket when the publisher is behind (TCP pushes back on
 * the venue). Frames are handed over as text.
 */
import WebSocket from 'ws';
import { RetryBackoff } from '../../platform/backoff.ts';
import type { Logger } from '../../platform/logger.ts';
import { connectorReconnects } from '../../platform/metrics.ts';

export type WsSessionOptions = {
  venue: string;
  url: string;
  /** Sent, in order, after every open. */
  subscriptions: () => string[];
  onFrame: (text: string) => void;
  /** Each (re)open, before the subscriptions are sent (venue state that depends on the connection). */
  onOpen?: () => void;
  /** An application-level ping some venues need to keep the connection (Hyperliquid). */
  heartbeat?: { intervalMs: number; message: string };
  idleTimeoutMs: number;
  backoff: { baseMs: number; maxMs: number };
  log: Logger;
};

export type WsSession = {
  pause(): void;
  resume(): void;
  /** Connections opened so far. */
  opens(): number;
  stop(): Promise<void>;
};

export function startWsSession(opts: WsSessionOptions): WsSession {
  const { venue, log } = opts;
  const backoff = new RetryBackoff({ ...opts.backoff, immediate: 1, jitter: true });
  let ws: WebSocket | null = null;
  let stopped = false;
  let paused = false;
  let opens = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed: () => void = () => {};

  const connect = () => {
    if (stopped) return;
    const socket = new WebSocket(opts.url, { perMessageDeflate: false });
    ws = socket;
    let lastFrameAt = Date.now();
    let idle: NodeJS.Timeout | undefined;
    let beat: NodeJS.Timeout | undefined;
    let healthy = false;
    // A timestamp per frame and a periodic check: re-arming a timer per frame would cost more.
    const touch = () => {
      lastFrameAt = Date.now();
    };
    const watch = () => {
      idle = setInterval(
        () => {
          if (Date.now() - lastFrameAt < opts.idleTimeoutMs) return;
          log.warn({ venue, idleMs: opts.idleTimeoutMs }, `${venue} connection silent; reconnecting`);
          socket.terminate();
        },
        Math.max(50, Math.floor(opts.idleTimeoutMs / 4)),
      );
    };
    socket.on('open', () => {
      opens++;
      log.info({ venue, url: opts.url }, `${venue} connected`);
      touch();
      watch();
      opts.onOpen?.();
      for (const m of opts.subscriptions()) socket.send(m);
      if (opts.heartbeat) {
        const { intervalMs, message } = opts.heartbeat;
        beat = setInterval(() => socket.readyState === WebSocket.OPEN && socket.send(message), intervalMs);
      }
      if (paused) socket.pause();
    });
    socket.on('message', (data, isBinary) => {
      touch();
      if (!healthy) {
        healthy = true;
        backoff.reset();
      }
      const text = isBinary ? Buffer.from(data as Buffer).toString('utf8') : data.toString();
      opts.onFrame(text);
    });
    socket.on('ping', touch);
    socket.on('pong', touch);
    socket.on('error', (err) => log.warn({ venue, err: err.message }, `${venue} connection error`));
    socket.on('close', (code) => {
      clearInterval(idle);
      clearInterval(beat);
      if (ws === socket) ws = null;
      if (stopped) {
        closed();
        return;
      }
      const waitMs = backoff.next();
      connectorReconnects.inc({ venue });
      log.warn({ venue, code, retryInMs: waitMs }, `${venue} connection lost; reconnecting`);
      retryTimer = setTimeout(connect, waitMs);
    });
  };
  connect();

  return {
    pause() {
      paused = true;
      ws?.pause();
    },
    resume() {
      paused = false;
      ws?.resume();
    },
    opens: () => opens,
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      const socket = ws;
      if (!socket || socket.readyState === WebSocket.CLOSED) return;
      const done = new Promise<void>((r) => {
        closed = r;
      });
      socket.close(1000);
      const timer = setTimeout(() => socket.terminate(), 1_000);
      await done;
      clearTimeout(timer);
    },
  };
}
