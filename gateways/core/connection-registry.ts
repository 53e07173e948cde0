/**
 * The open SSE connections of one gateway: heartbeats, and terminal `reconnect` on shutdown.
 * A connection listens on its key's revocation signal, which is shared by every stream of that key
 * in the process and lives as long as the key: the listener is removed when the connection closes,
 * so open/close cycles leave the signal with one listener per open connection, never more.
 */

import type { FastifyReply } from 'fastify';
import type { ErrorCode } from '../../contracts/errors.ts';
import { openStreams } from '../../platform/metrics.ts';
import { Flusher } from './flusher.ts';
import type { Principal } from './guard.ts';
import type { SseConnection } from './sse-connection.ts';

export class ConnectionRegistry {
  readonly flusher = new Flusher();
  private readonly open = new Set<SseConnection>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    heartbeatMs: number,
    private readonly surface = 'unified',
  ) {
    this.timer = setInterval(() => {
      for (const c of this.open) c.heartbeat();
    }, heartbeatMs);
    this.timer.unref();
  }

  get size(): number {
    return this.open.size;
  }

  /** The largest unsent backlog of any connection, bytes (metrics, tests). */
  maxBacklogBytes(): number {
    let max = 0;
    for (const c of this.open) max = Math.max(max, c.backlogBytes);
    return max;
  }

  /**
   * Takes over the response for an SSE stream: hijacks it, registers the connection, ends it with
   * `auth_expired` if the key is revoked, runs `onClose` (and releases the principal) when it ends,
   * and sends the headers. Returns false, after cleaning up, if the client has already gone.
   */
  start(
    conn: SseConnection,
    reply: FastifyReply,
    opts: { principal?: Principal | undefined; headers?: Record<string, string>; onClose?: () => void },
  ): boolean {
    const revoked = opts.principal?.revoked;
    const onRevoked = () => conn.terminate('key_revoked');
    const cleanup = () => {
      revoked?.removeEventListener('abort', onRevoked);
      opts.onClose?.();
      this.remove(conn);
      opts.principal?.release();
    };
    if (conn.closed) {
      cleanup();
      return false;
    }
    reply.hijack();
    conn.onClosed = cleanup;
    revoked?.addEventListener('abort', onRevoked, { once: true });
    this.add(conn);
    conn.open(opts.headers ?? {});
    if (revoked?.aborted) onRevoked(); // revoked before the listener was there: it never fires
    return true;
  }

  add(c: SseConnection): void {
    if (!this.open.has(c)) openStreams.inc({ surface: this.surface });
    this.open.add(c);
  }

  remove(c: SseConnection): void {
    if (this.open.delete(c)) openStreams.dec({ surface: this.surface });
  }

  /** Ends every open stream with the terminal error of a catalogue row (a maintenance window starting). */
  terminateAll(code: ErrorCode, message?: string): void {
    for (const c of [...this.open]) c.terminate(code, message);
  }

  /** Sends every client a terminal `reconnect` and stops heartbeats. */
  closeAll(message: string): void {
    clearInterval(this.timer);
    for (const c of [...this.open]) c.terminate('reconnect', message);
  }
}
