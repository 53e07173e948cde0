/**
 * The process's one live tail of `MD`, shared by every edge in it (unified SSE, JSON-RPC, ... and
 * both regions): one JetStream subscription per process, fanned out in-process (ARCHITECTURE.md).
 * Each edge acquires it when it starts and releases it when it stops; the first acquire starts it,
 * the last release stops it. Keyed by the NATS connection: one connection, one tail.
 */
import { LiveTail } from '../gateways/core/live-tail.ts';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';

export type TailHold = { tail: LiveTail; release(): void };

type Shared = { tail: Promise<LiveTail>; holders: number };

const shared = new WeakMap<Nats, Shared>();

export async function acquireTail(nats: Nats, config: Config, log: Logger): Promise<TailHold> {
  let entry = shared.get(nats);
  if (!entry) {
    const tail = LiveTail.start(nats, log, {
      name: 'md-live-tail',
      ringSize: config.SSE_RING_SIZE,
      staleAfterMs: config.SSE_FEED_STALE_MS,
      expectedCoins: config.COINS,
    });
    entry = { tail, holders: 0 };
    shared.set(nats, entry);
    tail.catch(() => shared.delete(nats));
  }
  const held = entry;
  held.holders++;
  let tail: LiveTail;
  try {
    tail = await held.tail;
  } catch (err) {
    held.holders--;
    throw err;
  }
  let released = false;
  return {
    tail,
    release() {
      if (released) return;
      released = true;
      if (--held.holders > 0) return;
      if (shared.get(nats) === held) shared.delete(nats);
      tail.stop();
    },
  };
}
