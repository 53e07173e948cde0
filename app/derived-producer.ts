/** The derived producer: bars and book snapshots from `MD` into `DERIVED` (producers/derived/). */
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { startDerivedRunner } from '../producers/derived/runner.ts';

export function startDerivedProducer(nats: Nats, log: Logger): Stoppable {
  const runner = startDerivedRunner(nats, log);
  return { name: 'producer-derived', stop: () => runner.stop() };
}
