/**
 * One disk-sync connection as the connection registry sees it (gateways/core/connection-registry.ts):
 * its buffered sink, plus what the registry's heartbeat tick does for a WebSocket:
 * - a pong (or any client frame) not seen for DISKSYNC_PONG_TIMEOUT_MS → close 4007, else a ping;
 * - the key's lease renewed (lease.ts): lost to another connection → 4008; NATS unreachable for
 *   longer than DISKSYNC_NATS_GRACE_MS → 4009. And whatever the grace, a timer at the lease's
 *   `heldUntil`, moved on by each renewal: a holder that could not renew in time ends (4009)
 *   before another connection of the key could be admitted.
 * A live consumer the sink reports as overflowing (`upstream_lag`) is ended at once with 1013,
 * before anything is conflated: the copy on the client's disk stays exact, and it resumes with
 * `from_seq`.
 */
import type { WebSocket } from 'ws';
import type { ErrorCode } from '../../contracts/errors.ts';
import type { BufferedSink } from '../core/buffered-sink.ts';
import type { Connection } from '../core/connection-registry.ts';
import type { FramerState } from './framer.ts';
import type { Lease } from './lease.ts';

export type Liveness = { pongTimeoutMs: number; natsGraceMs: number };

export class WsConnection implements Connection {
  onClosed: (() => void) | null = null;
  private lastSeen = performance.now();
  private lastRenewed = performance.now();
  private renewing = false;
  private expiry: NodeJS.Timeout | null = null;

  constructor(
    readonly sink: BufferedSink,
    private readonly ws: WebSocket,
    private readonly lease: Lease,
    private readonly state: FramerState,
    private readonly liveness: Liveness,
  ) {
    sink.onClosed = () => {
      if (this.expiry) clearTimeout(this.expiry);
      this.onClosed?.();
    };
    this.armExpiry();
    const seen = () => {
      this.lastSeen = performance.now();
    };
    ws.on('pong', seen);
    ws.on('message', seen);
  }

  get closed(): boolean {
    return this.sink.closed;
  }

  get backlogBytes(): number {
    return this.sink.backlogBytes;
  }

  get highWaterBytes(): number {
    return this.sink.highWaterBytes;
  }

  open(headers: Record<string, string>): void {
    this.sink.open(headers);
  }

  terminate(code: ErrorCode, message?: string): void {
    this.sink.terminate(code, message);
  }

  /** Called by the sink's framer path once a live consumer overflowed (see the file comment). */
  tooSlow(): void {
    if (this.state.lagged && !this.sink.closed) this.sink.terminate('reconnect');
  }

  heartbeat(): void {
    if (this.sink.closed) return;
    const now = performance.now();
    if (now - this.lastSeen > this.liveness.pongTimeoutMs) {
      this.terminate(
        'heartbeat_timeout',
        `No pong within ${Math.round(this.liveness.pongTimeoutMs / 1_000)} seconds.`,
      );
      return;
    }
    this.ws.ping();
    void this.renew(now);
  }

  /** Ends the connection when the lease is no longer surely held (unless renewed before). */
  private armExpiry(): void {
    if (this.expiry) clearTimeout(this.expiry);
    const ms = this.lease.heldUntil() - performance.now();
    if (!Number.isFinite(ms)) return; // no lease to lose (no key)
    this.expiry = setTimeout(
      () => this.terminate('upstream_unavailable', 'NATS unreachable.'),
      Math.max(0, ms),
    );
    this.expiry.unref();
  }

  private async renew(now: number): Promise<void> {
    if (this.renewing) {
      if (now - this.lastRenewed > this.liveness.natsGraceMs)
        this.terminate('upstream_unavailable', 'NATS unreachable.');
      return;
    }
    this.renewing = true;
    const outcome = await this.lease.renew();
    this.renewing = false;
    if (outcome === 'renewed') {
      this.lastRenewed = performance.now();
      if (!this.sink.closed) this.armExpiry();
    } else if (outcome === 'lost') this.terminate('duplicate_connection');
    else if (performance.now() - this.lastRenewed > this.liveness.natsGraceMs)
      this.terminate('upstream_unavailable', 'NATS unreachable.');
  }
}
