/** The simulator producer: live synthetic markets for the configured coins into `MD`. */
import type { Config } from '../platform/config.ts';
import type { Stoppable } from '../platform/lifecycle.ts';
import type { Logger } from '../platform/logger.ts';
import type { Nats } from '../platform/nats.ts';
import { startLiveRunner } from '../producers/simulator/live-runner.ts';

export function startSimProducer(nats: Nats, config: Config, log: Logger): Stoppable {
  const runner = startLiveRunner(
    nats,
    {
      coins: config.COINS,
      seed: config.SIM_SEED,
      tradeRate: config.SIM_TRADE_RATE,
      bookIntervalMs: config.SIM_BOOK_INTERVAL_MS,
    },
    log,
  );
  return { name: 'producer-sim', stop: () => runner.stop() };
}
