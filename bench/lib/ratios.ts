/**
 * The ratios of a benchmark's JSON result, found by name: every finite number whose key is
 * `ratio`, starts with `ratio_`, ends with `_ratio` or reads `<a>_vs_<b>` (`p50_vs_bare`), keyed
 * by its path in the document (`grpc.catch_up.ratio`). Each benchmark states its figures as
 * ratios to a baseline measured in the same run, so these are what survives a noisy machine, and
 * what `npm run bench:check` compares with `bench/baseline.json`. A benchmark's `runs` (every run
 * of a repeated measurement, listed so that a bimodal server shows) are not judged one by one, since
 * one noisy pair on a 2-core machine would fail the check: the aggregates beside them
 * (`ratio_median`, `ratio_worst_run`, `ratio_min`) are. A reference server's own ratios
 * (`reference_*`: a bare server against the raw consumer) measure the machine, not the product,
 * and are not judged either.
 *
 * Which way is better is read from the name, as the benchmarks name them: a ratio of latencies or
 * of time or memory (`p50`, `p99`, `latency`, `_ms`, `_us`, `seconds`, `time`, `rss`) is better lower; any
 * other ratio (events/s, rows/s, MB/s) is better higher. `bench/baseline.json` records the direction
 * of each accepted ratio, and what it records wins (a name the rule reads wrongly is fixed there).
 */
export type Better = 'higher' | 'lower';
export type Ratio = { value: number; better: Better };

const IS_RATIO = /^(ratio|ratio_.+|.+_ratio|.+_vs_.+)$/;
const LOWER = /(p50|p90|p99|latency|_ms|_us|seconds|time|rss)/;

export function betterOf(path: string): Better {
  return LOWER.test(path) ? 'lower' : 'higher';
}

/** Every ratio of `doc`, with the path prefixed by `prefix` (the benchmark's name). */
export function ratiosOf(doc: unknown, prefix: string): Record<string, Ratio> {
  const out: Record<string, Ratio> = {};
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      for (const [i, v] of node.entries()) walk(v, `${path}[${i}]`);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'goal') continue; // a goal's own numbers are targets, not measurements
      if (key === 'runs') continue; // judged by the aggregates beside them
      if (key.startsWith('reference_')) continue; // the machine's figures, not the product's
      const at = `${path}.${key}`;
      if (typeof value === 'number' && Number.isFinite(value) && IS_RATIO.test(key))
        out[at] = { value, better: betterOf(at) };
      else walk(value, at);
    }
  };
  walk(doc, prefix);
  return out;
}

/** How much worse `now` is than `accepted` (0.25: 25 % worse; ≤ 0: as good or better). */
export function worsening(accepted: Ratio, now: number): number {
  if (accepted.value === 0) return 0;
  return accepted.better === 'higher'
    ? (accepted.value - now) / accepted.value
    : (now - accepted.value) / accepted.value;
}

/** An accepted ratio as a run measured it. */
export type Row = {
  path: string;
  better: Better;
  accepted: number;
  /** The best value over the runs (null: not measured). */
  now: number | null;
  /** Every run's value, when it was measured more than once. */
  runs?: number[];
  worse: number | null;
  ok: boolean;
};

/**
 * Each accepted ratio judged by the best of its values over `runs` (a run's ratios by path):
 * within `tolerance` (0.2: 20 % worse at most) or not; a ratio no run measured is not within.
 */
export function judge(
  accepted: Record<string, Ratio>,
  runs: readonly { ratios: Record<string, Ratio> }[],
  tolerance: number,
): Row[] {
  return Object.entries(accepted).map(([path, a]) => {
    const values = runs.flatMap((r) => (r.ratios[path] ? [r.ratios[path].value] : []));
    const best = values.length ? (a.better === 'higher' ? Math.max : Math.min)(...values) : undefined;
    const worse = best === undefined ? null : worsening(a, best);
    return {
      path,
      better: a.better,
      accepted: a.value,
      now: best ?? null,
      ...(values.length > 1 ? { runs: values } : {}),
      worse,
      ok: worse !== null && worse <= tolerance,
    };
  });
}
