/**
 * Latency comparisons that survive a noisy machine: each side (the edge and its baseline) is
 * measured in turn, in several rounds, the order of the sides reversed every other round (so a
 * drift in the machine's load favours neither), after an unrecorded warm-up window of each. The
 * figures are the median over rounds of each side's p50 and p99, and the median over rounds of
 * the ratio of the two sides' figures in the same round (adjacent windows, similar load).
 */
import type { Histogram } from './histogram.ts';

/** One window of one side: its latencies in µs. */
export type Side = () => Promise<Histogram>;

export type SideSummary = {
  /** Median over rounds of the round's p50 / p99 (ms). */
  p50_ms: number;
  p99_ms: number;
  /** Each round's p50 (ms), in round order. */
  rounds_p50_ms: number[];
  /** Samples over all recorded rounds. */
  n: number;
};

export type Comparison = {
  rounds: number;
  sides: Record<string, SideSummary>;
  /** Median over rounds of (side's p50 ÷ baseline's p50) in the same round, per side. */
  p50_ratio: Record<string, number>;
  p99_ratio: Record<string, number>;
};

const round3 = (x: number) => Math.round(x * 1_000) / 1_000;

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

/** Runs `sides` (first: the baseline) in `rounds` alternating rounds after a warm-up of each. */
export async function compareInRounds(
  sides: Record<string, Side>,
  rounds: number,
  progress: (line: string) => void = () => {},
): Promise<Comparison> {
  const names = Object.keys(sides);
  const baseline = names[0] as string;
  for (const name of names) await (sides[name] as Side)(); // warm-up, not recorded
  const p50 = new Map<string, number[]>(names.map((n) => [n, []]));
  const p99 = new Map<string, number[]>(names.map((n) => [n, []]));
  const counts = new Map<string, number>(names.map((n) => [n, 0]));
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? names : [...names].reverse();
    for (const name of order) {
      const h = await (sides[name] as Side)();
      p50.get(name)?.push(h.percentile(50) / 1_000);
      p99.get(name)?.push(h.percentile(99) / 1_000);
      counts.set(name, (counts.get(name) ?? 0) + h.count);
      progress(`round ${r + 1}/${rounds} ${name}: p50 ${round3(h.percentile(50) / 1_000)} ms`);
    }
  }
  const ratio = (of: Map<string, number[]>, name: string) =>
    round3(median((of.get(name) ?? []).map((x, i) => x / ((of.get(baseline) ?? [])[i] ?? Number.NaN))));
  const others = names.filter((n) => n !== baseline);
  return {
    rounds,
    sides: Object.fromEntries(
      names.map((n) => [
        n,
        {
          p50_ms: round3(median(p50.get(n) ?? [])),
          p99_ms: round3(median(p99.get(n) ?? [])),
          rounds_p50_ms: (p50.get(n) ?? []).map(round3),
          n: counts.get(n) ?? 0,
        },
      ]),
    ),
    p50_ratio: Object.fromEntries(others.map((n) => [n, ratio(p50, n)])),
    p99_ratio: Object.fromEntries(others.map((n) => [n, ratio(p99, n)])),
  };
}
