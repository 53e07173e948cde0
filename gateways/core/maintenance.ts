/**
 * Maintenance windows as the transports see them: whether a window is in force for a region and
 * transport (the guard refuses new requests with the `maintenance` catalogue row, `Retry-After` =
 * seconds to the window's end), and a signal when one starts (open streams end with the terminal
 * `maintenance` event). Windows come from the process's StatusBoard, so every process applies a
 * change as soon as it is projected, and service resumes when a window ends: nothing to restart.
 * The status API and `/metrics` are never refused (their scopes are exempt); the console does not
 * pass the guard at all.
 */
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import {
  type MaintenanceWindow,
  type Region,
  type StatusTransport,
  windowActive,
  windowCovers,
} from '../../contracts/status.ts';
import type { GuardRequest } from './guard.ts';

export type WindowSource = {
  pendingWindows(): MaintenanceWindow[];
  onChange(fn: () => void): () => void;
};

/** Capabilities served during maintenance: the status API and the metrics endpoint. */
const EXEMPT: ReadonlySet<Scope> = new Set<Scope>(['status:read', 'status:admin', 'metrics']);

/** setTimeout's longest delay. */
const MAX_DELAY_MS = 2 ** 31 - 1;

type Listener = { region: Region | null; transport: StatusTransport; fn: (w: MaintenanceWindow) => void };

export class Maintenance {
  private readonly listeners = new Set<Listener>();
  /** Ids of windows already announced as started (only pending windows: bounded by the board). */
  private announced = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: WindowSource,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = source.onChange(() => this.review());
    this.review();
  }

  /** The window in force for this region and transport (the one ending last), or null. */
  active(region: Region | null, transport: StatusTransport): MaintenanceWindow | null {
    const now = this.now();
    let found: MaintenanceWindow | null = null;
    for (const w of this.source.pendingWindows())
      if (windowActive(w, now) && windowCovers(w, region, transport) && (!found || w.ends_at > found.ends_at))
        found = w;
    return found;
  }

  /** Throws 503 `maintenance` (with Retry-After) when a window is in force for this transport. */
  assertOpen(region: Region | null, transport: StatusTransport): void {
    const w = this.active(region, transport);
    if (w) throw maintenanceError(w, this.now());
  }

  /** The guard's check: exempt capabilities pass (the status API and metrics stay up). */
  admit(req: Pick<GuardRequest, 'surface' | 'region' | 'capability'>): void {
    if (req.capability !== null && EXEMPT.has(req.capability)) return;
    this.assertOpen(req.region, req.surface);
  }

  /** Runs `fn` each time a window covering this region and transport starts; returns the unsubscribe. */
  onStart(region: Region | null, transport: StatusTransport, fn: (w: MaintenanceWindow) => void): () => void {
    const l: Listener = { region, transport, fn };
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  stop(): void {
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
    this.listeners.clear();
  }

  /** Announces windows that have started, and sets a timer for the next start. */
  private review(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const now = this.now();
    const pending = this.source.pendingWindows();
    this.announced = new Set([...this.announced].filter((id) => pending.some((w) => w.id === id)));
    let next = Infinity;
    for (const w of pending) {
      if (windowActive(w, now) && !this.announced.has(w.id)) {
        this.announced.add(w.id);
        for (const l of [...this.listeners]) if (windowCovers(w, l.region, l.transport)) l.fn(w);
      } else if (w.starts_at > now) next = Math.min(next, w.starts_at);
    }
    if (Number.isFinite(next)) {
      this.timer = setTimeout(() => this.review(), Math.min(MAX_DELAY_MS, next - now));
      this.timer.unref();
    }
  }
}

/** The `maintenance` error of a window: Retry-After = whole seconds to its end (at least 1). */
export function maintenanceError(w: MaintenanceWindow, now: number): ApiError {
  const err = new ApiError('maintenance', `scheduled maintenance until ${new Date(w.ends_at).toISOString()}`);
  err.retryAfterSeconds = Math.max(1, Math.ceil((w.ends_at - now) / 1_000));
  err.retryAfterMs = Math.max(1, w.ends_at - now);
  return err;
}
