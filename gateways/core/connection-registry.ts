/**
 * The open streaming connections of one gateway, whatever their transport: heartbeats, terminal
 * `reconnect` on shutdown, and the end of every stream of a key that is revoked (`key_revoked`,
 * a catalogue row each transport maps). Nothing here knows a web framework: a transport takes
 * over its socket (`takeOver`) and hands the registry a Connection.
 *
 * A connection listens on its key's revocation signal, which is shared by every stream of that key
 * in the process and lives as long as the key: the listener is removed when the connection closes,
 * so open/close cycles leave the signal with one listener per open connection, never more.
 */
import type { ErrorCode } from '../../contracts/errors.ts';
import { openStreams } from '../../platform/metrics.ts';
import type { Nats } from '../../platform/nats.ts';
import { Flusher } from './flusher.ts';
import type { Principal } from './guard.ts';
import { revocationError } from './key-expiry.ts';
import { onNatsLost } from './nats-loss.ts';

/** What the registry needs of a connection (BufferedSink is one). */
export type Connection = {
  readonly closed: boolean;
  onClosed: (() => void) | null;
  /** Starts the stream (status and headers where the transport has them). */
  open(headers: Record<string, string>): void;
  heartbeat(): void;
  /** Ends the stream with the terminal error of a catalogue row (and when a retry may succeed, s). */
  terminate(code: ErrorCode, message?: string, retryAfterSeconds?: number): void;
  /** Bytes queued and not yet handed to the wire. */
  readonly backlogBytes: number;
  /** The peak of queued plus wire-buffered bytes since the stream opened. */
  readonly highWaterBytes: number;
};

export type StartOptions = {
  principal?: Principal | undefined;
  headers?: Record<string, string>;
  /** Runs once when the connection ends, however it ends. */
  onClose?: () => void;
  /** Takes the socket from the transport's framework, right before the stream opens. */
  takeOver?: () => void;
};

export class ConnectionRegistry {
  readonly flusher = new Flusher();
  private readonly open = new Set<Connection>();
  private readonly timer: NodeJS.Timeout;
  private peak = 0;

  private readonly offLost: () => void;

  /** `lost`: NATS down this long ends every open stream with `reconnect` (nats-loss.ts). */
  constructor(
    heartbeatMs: number,
    private readonly surface = 'unified',
    lost?: { nats: Nats; afterMs: number },
  ) {
    this.timer = setInterval(() => {
      for (const c of this.open) c.heartbeat();
    }, heartbeatMs);
    this.timer.unref();
    this.offLost = lost
      ? onNatsLost(lost.nats, lost.afterMs, () =>
          this.terminateAll(
            'reconnect',
            'this edge has lost its market-data store; reconnect (another edge or region) with your last position',
          ),
        )
      : () => {};
  }

  get size(): number {
    return this.open.size;
  }

  /** The largest unsent backlog of any open connection now, bytes (metrics, tests). */
  maxBacklogBytes(): number {
    let max = 0;
    for (const c of this.open) max = Math.max(max, c.backlogBytes);
    return max;
  }

  /**
   * The largest high-water mark (queued + wire-buffered bytes) of any connection since the
   * registry started, closed ones included.
   */
  maxHighWaterBytes(): number {
    let max = this.peak;
    for (const c of this.open) max = Math.max(max, c.highWaterBytes);
    return max;
  }

  /**
   * Registers a connection and opens it: ends it with `key_revoked` if its key is revoked, runs
   * `onClose` (and releases the principal) when it ends. Returns false, after cleaning up, if the
   * client has already gone.
   */
  start(conn: Connection, opts: StartOptions = {}): boolean {
    const revoked = opts.principal?.revoked;
    // A key that expired ends its streams as a revoked one does, with its own reason (key-expiry.ts).
    const onRevoked = () => conn.terminate(revoked ? revocationError(revoked).code : 'key_revoked');
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
    opts.takeOver?.();
    conn.onClosed = cleanup;
    revoked?.addEventListener('abort', onRevoked, { once: true });
    this.add(conn);
    conn.open(opts.headers ?? {});
    if (revoked?.aborted) onRevoked(); // revoked before the listener was there: it never fires
    return true;
  }

  add(c: Connection): void {
    if (!this.open.has(c)) openStreams.inc({ surface: this.surface });
    this.open.add(c);
  }

  remove(c: Connection): void {
    if (!this.open.delete(c)) return;
    openStreams.dec({ surface: this.surface });
    this.peak = Math.max(this.peak, c.highWaterBytes);
  }

  /** Ends every open stream with the terminal error of a catalogue row (a maintenance window starting). */
  terminateAll(code: ErrorCode, message?: string, retryAfterSeconds?: number): void {
    for (const c of [...this.open]) c.terminate(code, message, retryAfterSeconds);
  }

  /** Sends every client a terminal `reconnect` and stops heartbeats. */
  closeAll(message: string): void {
    clearInterval(this.timer);
    this.offLost();
    for (const c of [...this.open]) c.terminate('reconnect', message);
  }
}
