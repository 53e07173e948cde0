/**
 * The status as one gateway process knows it: every record of KV `status`, read from the bucket's
 * stream in order (an ordered reader, reopened after a NATS reconnect), so every process hears a
 * change as soon as it is projected. Bounded: windows are dropped once ended or cancelled, resolved
 * incidents beyond the newest RESOLVED_INCIDENTS_KEPT are forgotten, and at most a fixed number of
 * unresolved incidents and pending windows is held (commands keep within those caps).
 */
import {
  type Incident,
  MAX_OPEN_INCIDENTS,
  MAX_PENDING_WINDOWS,
  type MaintenanceWindow,
  RESOLVED_INCIDENTS_KEPT,
} from '../../contracts/status.ts';
import { KV_BUCKETS } from '../../contracts/streams.ts';
import type { Logger } from '../../platform/logger.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { type OrderedReader, readOrdered } from '../../platform/ordered-reader.ts';
import { openStatusBucket } from './projector.ts';

/** Headroom over the command-side caps: concurrent commands may overshoot them a little. */
const HARD_CAP = 4;

export class StatusBoard {
  private readonly windows = new Map<string, MaintenanceWindow>();
  private readonly unresolved = new Map<string, Incident>();
  private resolved: Incident[] = [];
  private readonly listeners = new Set<() => void>();
  private reader: OrderedReader | null = null;
  private caughtUp: Promise<void> = Promise.resolve();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  static async start(nats: Nats, log: Logger): Promise<StatusBoard> {
    const board = new StatusBoard(log);
    await openStatusBucket(nats); // creates the bucket (and its stream) when absent
    const stream = `KV_${KV_BUCKETS.status}`;
    const prefix = `$KV.${KV_BUCKETS.status}.`;
    const last = (await nats.jsm.streams.info(stream)).state.last_seq;
    let reached!: () => void;
    board.caughtUp = last === 0 ? Promise.resolve() : new Promise((r) => (reached = r));
    board.reader = readOrdered(
      nats,
      { stream, filter: `${prefix}>`, startSeq: 1 },
      (msg) => {
        if (msg.data.length > 0) board.apply(msg.subject.slice(prefix.length), msg.data);
        if (msg.info.streamSequence >= last) reached?.();
      },
      log,
    );
    return board;
  }

  /** Settles once the records present at start are known (the first answers are then complete). */
  ready(): Promise<void> {
    return this.caughtUp;
  }

  /** Runs `fn` after every change; returns the unsubscribe function. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Windows not yet ended and not cancelled, soonest first. */
  pendingWindows(): MaintenanceWindow[] {
    this.prune();
    return [...this.windows.values()].sort((a, b) => a.starts_at - b.starts_at || a.id.localeCompare(b.id));
  }

  /** Unresolved incidents (newest first), then resolved ones (newest first). */
  incidents(): Incident[] {
    const newest = (a: Incident, b: Incident) => b.created_at - a.created_at || a.id.localeCompare(b.id);
    return [...[...this.unresolved.values()].sort(newest), ...this.resolved];
  }

  openIncidents(): Incident[] {
    return this.incidents().filter((i) => i.status !== 'resolved');
  }

  stop(): void {
    this.reader?.stop();
    this.listeners.clear();
  }

  /** Applies one projected record (exposed for the pure tests of the bounds). */
  apply(key: string, data: Uint8Array): void {
    let record: Incident | MaintenanceWindow;
    try {
      record = decode(data);
    } catch (err) {
      this.log.warn({ err: String(err), key }, 'undecodable status record ignored');
      return;
    }
    if (key.startsWith('incident.')) this.putIncident(record as Incident);
    else if (key.startsWith('maintenance.')) this.putWindow(record as MaintenanceWindow);
    for (const fn of this.listeners) fn();
  }

  private putIncident(inc: Incident): void {
    this.resolved = this.resolved.filter((i) => i.id !== inc.id);
    if (inc.status !== 'resolved') {
      if (this.unresolved.has(inc.id) || this.unresolved.size < MAX_OPEN_INCIDENTS * HARD_CAP)
        this.unresolved.set(inc.id, inc);
      return;
    }
    this.unresolved.delete(inc.id);
    this.resolved.unshift(inc);
    this.resolved.sort((a, b) => (b.resolved_at ?? 0) - (a.resolved_at ?? 0));
    this.resolved.length = Math.min(this.resolved.length, RESOLVED_INCIDENTS_KEPT);
  }

  private putWindow(w: MaintenanceWindow): void {
    if (w.cancelled_at !== null || w.ends_at <= this.now()) this.windows.delete(w.id);
    else if (this.windows.has(w.id) || this.windows.size < MAX_PENDING_WINDOWS * HARD_CAP)
      this.windows.set(w.id, w);
    this.prune();
  }

  private prune(): void {
    const now = this.now();
    for (const [id, w] of this.windows) if (w.ends_at <= now) this.windows.delete(id);
  }
}
