/**
 * `npm run bench:check` (bench/check.ts) judges a run by the ratios bench/lib/ratios.ts finds in
 * each benchmark's JSON: every ratio found with its path and direction, and "20 % worse" read the
 * right way for a throughput ratio and for a latency ratio.
 */
import { describe, expect, it } from 'vitest';
import { betterOf, judge, ratiosOf, worsening } from '../../bench/lib/ratios.ts';

describe('bench ratios', () => {
  it('finds every ratio by name, with its path, and judges runs by their aggregates', () => {
    const doc = {
      catch_up: { ratio: 0.91, events_per_s: 100 },
      live: { streams_1: { ratio_p50: 1.2, p50_ms: 3 }, goal: '≤ 1.3×' },
      runs: [{ ratio: 1.4 }, { ratio: 0.2 }],
      ratio_median: 1.4,
      list: [{ cpu_per_delivery_ratio: 1.4 }, { cpu_per_delivery_ratio: 'n/a' }],
      unary: { p50_vs_bare: 1.1, ratio: null, goal: { p50_vs_bare: 1.5 } },
      // A reference server against the raw consumer: the machine's figure, not the product's.
      reference_bare: { p50: 3, ratio_p50_vs_baseline: 1.2 },
    };
    expect(ratiosOf(doc, 'grpc')).toEqual({
      'grpc.catch_up.ratio': { value: 0.91, better: 'higher' },
      'grpc.live.streams_1.ratio_p50': { value: 1.2, better: 'lower' },
      'grpc.ratio_median': { value: 1.4, better: 'higher' },
      'grpc.list[0].cpu_per_delivery_ratio': { value: 1.4, better: 'higher' },
      'grpc.unary.p50_vs_bare': { value: 1.1, better: 'lower' },
    });
  });

  it('reads latency, time and memory ratios as better lower', () => {
    for (const p of ['x.latency.ratio', 'x.ratio_p99', 'x.seconds_ratio', 'x.peak_rss.ratio_24h_to_6h'])
      expect(betterOf(p), p).toBe('lower');
    for (const p of ['x.catch_up.ratio', 'x.workers_2_vs_workers_1.ratio'])
      expect(betterOf(p), p).toBe('higher');
  });

  it('measures how much worse a run is, either way round', () => {
    expect(worsening({ value: 2, better: 'higher' }, 1.5)).toBeCloseTo(0.25);
    expect(worsening({ value: 2, better: 'higher' }, 2.5)).toBeLessThan(0);
    expect(worsening({ value: 1, better: 'lower' }, 1.3)).toBeCloseTo(0.3);
    expect(worsening({ value: 1, better: 'lower' }, 0.8)).toBeLessThan(0);
  });

  it('judges each accepted ratio by the best of its runs, and a ratio no run measured as failed', () => {
    const accepted = {
      'u.events.ratio': { value: 2, better: 'higher' as const },
      'u.ratio_p99': { value: 2, better: 'lower' as const },
      'u.gone.ratio': { value: 1, better: 'higher' as const },
    };
    const first = {
      ratios: {
        'u.events.ratio': { value: 1.5, better: 'higher' as const },
        'u.ratio_p99': { value: 5, better: 'lower' as const },
      },
    };
    const again = {
      ratios: {
        'u.events.ratio': { value: 1.9, better: 'higher' as const },
        'u.ratio_p99': { value: 4.5, better: 'lower' as const },
      },
    };
    expect(judge(accepted, [first], 0.2).map((r) => r.ok)).toEqual([false, false, false]);
    const rows = judge(accepted, [first, again], 0.2);
    expect(rows[0]).toMatchObject({ now: 1.9, runs: [1.5, 1.9], ok: true });
    // A regression worse in every run stays a failure.
    expect(rows[1]).toMatchObject({ now: 4.5, runs: [5, 4.5], ok: false });
    expect(rows[2]).toMatchObject({ now: null, worse: null, ok: false });
  });
});
