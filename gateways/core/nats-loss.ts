/**
 * An edge whose NATS connection stays down serves nothing (no event, no lookup): after
 * NATS_LOST_CLOSE_MS it ends its open streams with `reconnect` (connection-registry.ts) and the
 * guard refuses new ones with `feed_unavailable`, so clients move to another edge or region (the
 * TypeScript client's next endpoint) instead of waiting on heartbeats from an edge with no data;
 * `/healthz` is 503 from the first moment. A NATS that comes back within the bound (a cluster
 * node's restart, a reconnect to another node) ends nothing. Driven by the connection's own
 * disconnect and reconnect (platform/nats.ts); 0 turns the rule off.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Nats } from '../../platform/nats.ts';

/** How long the connection has been down, ms (0 while up). */
const natsDownMs = (nats: Nats): number => {
  const since = nats.downSince();
  return since === null ? 0 : Date.now() - since;
};

/** Runs `onLost` each time the connection stays down for `afterMs`; returns the unsubscribe. */
export function onNatsLost(nats: Nats, afterMs: number, onLost: () => void): () => void {
  if (afterMs <= 0) return () => {};
  let timer: NodeJS.Timeout | null = null;
  const cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  // Counted from when it went down: a second disconnect before any reconnect changes nothing.
  const offDown = nats.onDisconnect(() => {
    if (timer) return;
    timer = setTimeout(
      () => {
        timer = null;
        onLost();
      },
      Math.max(0, afterMs - natsDownMs(nats)),
    );
    timer.unref();
  });
  const offUp = nats.onReconnect(cancel);
  return () => {
    cancel();
    offDown();
    offUp();
  };
}

/** The guard's rule: no new stream or request on an edge whose NATS has been down `afterMs`. */
export function natsLossAdmission(nats: Nats, afterMs: number): { admit(): void } {
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
