/**
 * Window planning: the dataset's model time [0, duration) is cut into windows of
 * `window_seconds`. Window i covers [i·w, (i+1)·w) (the last one ends at the duration) and its
 * rows are exactly `eventsBetween(config, from, to)`. The model is block-seeded (block k depends
 * on (config, k) only), so concatenating the windows in index order gives the same rows whatever
 * the window size, the worker count or the order in which windows ran.
 */
import type { ModelConfig } from '../../contracts/model-config.ts';

/** One unit of work and of retry: the events with model-time offset in [fromMs, toMs). */
export type GenerationWindow = {
  /** Position in the dataset, from 0; part files are merged in this order. */
  readonly index: number;
  /** Model-time offsets from `start_time_ms`, ms. */
  readonly fromMs: number;
  readonly toMs: number;
};

/** The windows covering [0, durationSeconds) in order; the last one may be shorter. */
export function planWindows(durationSeconds: number, windowSeconds: number): GenerationWindow[] {
  if (!(durationSeconds > 0) || !(windowSeconds > 0)) throw new RangeError('duration and window must be > 0');
  const durationMs = Math.round(durationSeconds * 1000);
  const windowMs = Math.round(windowSeconds * 1000);
  const windows: GenerationWindow[] = [];
  for (let fromMs = 0, index = 0; fromMs < durationMs; fromMs += windowMs, index++) {
    windows.push({ index, fromMs, toMs: Math.min(durationMs, fromMs + windowMs) });
  }
  return windows;
}

/**
 * Expected rows in [0, durationMs): the book count is exact (one per interval), trades are their
 * long-run mean. Used for progress only; the artifact's row_count is counted, never estimated.
 */
export function estimateRows(config: ModelConfig, durationMs: number): number {
  const books = Math.ceil(durationMs / config.book_update_interval_ms);
  const trades = (config.trade_intensity * durationMs) / 1000;
  return Math.round(books + trades);
}
