/**
 * Capture latency: the time between the exchange stamping an event and the platform capturing
 * it. A fixed base plus an exponential jitter (memoryless, with the occasional long delay seen on
 * real feeds), floored to whole ms. Both parts are non-negative, so capture_time_ms is never
 * before timestamp_ms.
 *
 * Counters of the LATENCY stream: trade n of a block uses 2n, book snapshot i uses 2i + 1, so
 * the two kinds of event never share a draw.
 */

import type { RandomStream } from '../../contracts/prng.ts';
import type { ModelConfig } from './config.ts';

/** LATENCY counter of the block's n-th trade. */
export const tradeLatencyIndex = (ordinal: number): number => 2 * ordinal;

/** LATENCY counter of the block's i-th book snapshot. */
export const bookLatencyIndex = (snapshot: number): number => 2 * snapshot + 1;

/**
 * Capture time (Unix ms) of an event stamped `timestampMs`, from the uniform at `index` of the
 * block's LATENCY stream.
 */
export function captureTimeMs(
  config: ModelConfig,
  latency: RandomStream,
  timestampMs: number,
  index: number,
): number {
  const jitter = -Math.log(1 - latency.uniform(index)) * config.latency_jitter_ms;
  return timestampMs + config.latency_base_ms + Math.floor(jitter);
}
