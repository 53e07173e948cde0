/**
 * An edge whose NATS connection stays down serves nothing (no event, no lookup): after
 * NATS_LOST_CLOSE_MS it ends its open streams with `reconnect` (connection-registry.ts) and the
 * guard refuses new ones with `feed_unavailable`, so clients move to another edge or region (the
 * TypeScript client's next endpoint) instead of waiting on heartbeats from an edge with no data;
 * `/healthz` is 503 from the first moment. A NATS that comes back within the bound (a cluster
 * node's restart, a reconnect to another node) ends nothing. One tracker per connection, polling
 * `connected()` four times a second; 0 turns the rule off.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Nats } from '../../platform/nats.ts';

const POLL_MS = 250;

type Tracker = { downSince: number | null; listeners: Set<(downMs: number) => void>; timer: NodeJS.Timeout };
const trackers = new WeakMap<Nats, Tracker>();

function trackerOf(nats: Nats): Tracker {
  let t = trackers.get(nats);
  if (!t) {
    const tracker: Tracker = {
      downSince: null,
      listeners: new Set(),
      timer: setInterval(() => {
        if (nats.connected()) tracker.downSince = null;
        else tracker.downSince ??= Date.now();
        const down = tracker.downSince === null ? 0 : Date.now() - tracker.downSince;
        for (const fn of tracker.listeners) fn(down);
      }, POLL_MS),
    };
    tracker.timer.unref();
    // A closed connection stops being watched (and can be collected).
    void nats.nc.closed().then(() => clearInterval(tracker.timer));
    trackers.set(nats, tracker);
    t = tracker;
  }
  return t;
}

/** How long the connection has been down, ms (0 while up). */
export function natsDownMs(nats: Nats): number {
  const since = trackerOf(nats).downSince;
  return since === null ? 0 : Date.now() - since;
}

/** Runs `onLost` once each time the connection has been down for `afterMs`; returns the unsubscribe. */
export function onNatsLost(nats: Nats, afterMs: number, onLost: () => void): () => void {
  if (afterMs <= 0) return () => {};
  const t = trackerOf(nats);
  let fired = false;
  const listener = (downMs: number) => {
    if (downMs === 0) fired = false;
    else if (downMs >= afterMs && !fired) {
      fired = true;
      onLost();
    }
  };
  t.listeners.add(listener);
  return () => t.listeners.delete(listener);
}

/** The guard's rule: no new stream or request on an edge whose NATS has been down `afterMs`. */
export function natsLossAdmission(nats: Nats, afterMs: number): { admit(): void } {
  trackerOf(nats);
  return {
    admit() {
      const down = natsDownMs(nats);
      if (afterMs > 0 && down >= afterMs)
        throw new ApiError(
          'feed_unavailable',
          `this edge has been without its market-data store for ${Math.round(down / 1_000)} s; use another edge or region`,
        );
    },
  };
}
