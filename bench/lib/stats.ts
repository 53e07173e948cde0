/**
 * Order statistics of a benchmark's samples. `percentile` is the nearest rank: the smallest sample
 * with at least p % of the samples at or below it (p99 of 100 samples is the 99th, not the largest).
 */
export { median } from './rounds.ts';

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}
