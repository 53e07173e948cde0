import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  DEFAULT_FUNDING_START_TS_MS,
  FundingRequest,
  type FundingRequestInput,
} from '../../contracts/funding.ts';
import { EXCHANGES, VENUE_DETAILS } from '../../contracts/venues.ts';
import { FUNDING_MODELS } from '../../producers/funding/registry.ts';
import { simulateFunding } from '../../producers/funding/simulate.ts';

/** VENUES.md §7.1: spot 50,000, mark 50,050, long 1 BTC (P = 0.001). */
const worked = { spot_price: 50_000, mark_price: 50_050, position_size: 1 } as const;
const HOUR_MS = 3_600_000;

const run = (input: FundingRequestInput) => simulateFunding(input);
const rates = (input: FundingRequestInput) => run(input).periods.map((p) => p.funding_rate);

describe('funding simulation: the worked examples of VENUES.md §7.1', () => {
  it.each(['binance', 'bybit', 'okx'] as const)(
    '%s: F = 0.0005, the long pays 25.025 per 8 h and 75.075 a day',
    (exchange) => {
      const { periods, summary } = run({ exchange, ...worked });
      const p = periods[0];
      expect(p?.funding_rate).toBe(0.0005);
      expect(p?.funding_rate_bps).toBe(5);
      expect(p?.premium_bps).toBe(10);
      expect(p?.mark_price).toBe(50_050);
      expect(p?.index_price).toBe(50_000);
      expect(p?.payment).toBe(-25.025);
      expect(p?.cumulative_pnl).toBe(-25.025);
      expect(p?.next_funding_time).toBe(DEFAULT_FUNDING_START_TS_MS + 8 * HOUR_MS);
      expect(summary.periods_per_day).toBe(3);
      expect(summary.initial_daily_payment).toBe(-75.075);
    },
  );

  it('hyperliquid: 0.0005 / 8 = 0.0000625 per hour on the oracle price, 3.125 an hour and 75.0 a day', () => {
    const { periods, summary } = run({ exchange: 'hyperliquid', ...worked });
    expect(periods[0]?.funding_rate).toBe(0.0000625);
    expect(periods[0]?.payment).toBe(-3.125);
    expect(periods[0]?.next_funding_time).toBe(DEFAULT_FUNDING_START_TS_MS + HOUR_MS);
    expect(summary.notional_price).toBe('oracle');
    expect(summary.initial_daily_payment).toBe(-75);
  });

  it('sgx: the generic formula gives 0.0005, inside the 0.35 % cap', () => {
    const { periods, summary } = run({ exchange: 'sgx', ...worked });
    expect(periods[0]?.funding_rate).toBe(0.0005);
    expect(periods[0]?.payment).toBe(-25.025);
    expect(summary.cap).toBe(0.0035);
  });

  it('cme: no funding, a 50 USD/BTC basis carry converging to zero by expiry', () => {
    const { periods, summary } = run({ exchange: 'cme', ...worked });
    expect(periods[0]?.funding_rate).toBe(0);
    expect(periods[0]?.premium_bps).toBe(10);
    expect(summary.basis_carry_pnl).toBe(-50);
  });

  it('with P = 0 every clamp venue returns F = I (0.01 %/8 h; Hyperliquid 0.00125 %/h)', () => {
    const flat = { spot_price: 50_000, mark_price: 50_000 };
    for (const exchange of ['binance', 'bybit', 'okx'] as const)
      expect(rates({ exchange, ...flat })[0]).toBe(0.0001);
    expect(rates({ exchange: 'hyperliquid', ...flat })[0]).toBe(0.0000125);
  });
});

describe('funding simulation: determinism and the seeded path', () => {
  it('gives equal results for equal requests, whatever the defaults were written as', () => {
    const a = run({ exchange: 'binance', ...worked, num_periods: 50, seed: 7 });
    const b = run({ ...FundingRequest.parse({ exchange: 'binance', ...worked, num_periods: 50, seed: 7 }) });
    expect(b).toEqual(a);
    expect(run({ exchange: 'hyperliquid', ...worked, num_periods: 200 })).toEqual(
      run({ exchange: 'hyperliquid', ...worked, num_periods: 200 }),
    );
  });

  it('fills defaults: one period, hard cap, seed 42, a fixed start time', () => {
    const { request, periods } = run({ exchange: 'okx', spot_price: 100, mark_price: 100 });
    expect(request).toMatchObject({ position_size: 1, num_periods: 1, use_soft_cap: false, seed: 42 });
    expect(periods).toHaveLength(1);
    expect(periods[0]?.start_ts_ms).toBe(DEFAULT_FUNDING_START_TS_MS);
  });

  it('different seeds share period 0 and differ after it', () => {
    for (const exchange of EXCHANGES) {
      const a = run({ exchange, ...worked, num_periods: 10, seed: 1 }).periods;
      const b = run({ exchange, ...worked, num_periods: 10, seed: 2 }).periods;
      expect(b[0]).toEqual(a[0]);
      for (let k = 1; k < 10; k++) expect(b[k]?.premium_bps).not.toBe(a[k]?.premium_bps);
    }
  });

  it('a longer run extends a shorter one (perpetuals): period k never depends on num_periods', () => {
    const short = run({ exchange: 'bybit', ...worked, num_periods: 5 }).periods;
    const long = run({ exchange: 'bybit', ...worked, num_periods: 20 }).periods;
    expect(long.slice(0, 5)).toEqual(short);
  });

  it('lays periods one interval apart from start_ts_ms and accumulates payments', () => {
    const start = Date.UTC(2025, 5, 1, 8);
    const { periods, summary } = run({ exchange: 'binance', ...worked, num_periods: 6, start_ts_ms: start });
    let sum = 0;
    for (const [k, p] of periods.entries()) {
      expect(p.period_index).toBe(k);
      expect(p.start_ts_ms).toBe(start + k * 8 * HOUR_MS);
      sum += p.payment;
      expect(p.cumulative_pnl).toBeCloseTo(sum, 8);
    }
    expect(summary.end_ts_ms).toBe(start + 6 * 8 * HOUR_MS);
    expect(summary.total_payment).toBe(periods.at(-1)?.cumulative_pnl);
    expect(summary.gross_paid - summary.gross_received).toBeCloseTo(-summary.total_payment, 8);
  });
});

describe('funding simulation: caps', () => {
  const hot = { spot_price: 50_000, mark_price: 52_000 }; // P = 4 %: far beyond every perp cap but Hyperliquid's

  it('a hard clamp holds every rate at or inside the cap, and reports the capped periods', () => {
    for (const exchange of ['binance', 'bybit', 'okx', 'sgx', 'hyperliquid'] as const) {
      const { periods, summary } = run({ exchange, ...hot, num_periods: 300, seed: 3 });
      const cap = summary.cap as number;
      expect(cap).toBe(VENUE_DETAILS[exchange].funding.cap.value);
      for (const p of periods) expect(Math.abs(p.funding_rate)).toBeLessThanOrEqual(cap);
      if (exchange !== 'hyperliquid') {
        expect(periods[0]?.funding_rate).toBe(cap);
        expect(periods[0]?.capped).toBe(true);
        expect(summary.periods_capped).toBe(periods.filter((p) => p.capped).length);
        expect(summary.periods_capped).toBeGreaterThan(0);
      }
    }
  });

  it('the soft cap stays strictly inside the cap and is smooth: increasing, slope 1 near zero', () => {
    const cap = VENUE_DETAILS.binance.funding.cap.value as number;
    const soft = (mark: number) =>
      rates({ exchange: 'binance', spot_price: 50_000, mark_price: mark, use_soft_cap: true })[0] as number;
    const hard = (mark: number) =>
      rates({ exchange: 'binance', spot_price: 50_000, mark_price: mark })[0] as number;
    let previous = Number.NEGATIVE_INFINITY;
    for (let mark = 50_030; mark <= 52_000; mark += 10) {
      const r = soft(mark);
      expect(Math.abs(r)).toBeLessThan(cap);
      expect(r).toBeGreaterThan(previous);
      previous = r;
    }
    for (let mark = 47_000; mark <= 49_970; mark += 10) expect(Math.abs(soft(mark))).toBeLessThan(cap);
    // Small rates pass almost unchanged: cap·tanh(F/cap) = F(1 − F²/3cap² + …).
    expect(soft(50_000)).toBeCloseTo(hard(50_000), 7);
    expect(soft(50_050)).toBeLessThan(hard(50_050));
    expect(soft(50_050)).toBeCloseTo(cap * Math.tanh(0.0005 / cap), 15);
  });

  it('the soft cap holds over long seeded paths on every perp', () => {
    for (const exchange of ['binance', 'bybit', 'okx', 'sgx', 'hyperliquid'] as const) {
      const { periods, summary } = run({ exchange, ...hot, num_periods: 500, use_soft_cap: true, seed: 11 });
      expect(summary.cap_mode).toBe('soft');
      for (const p of periods) expect(Math.abs(p.funding_rate)).toBeLessThan(summary.cap as number);
    }
  });
});

describe('funding simulation: venues', () => {
  it('hyperliquid pays each hour one eighth of the 8-hour rate', () => {
    const hl = FUNDING_MODELS.hyperliquid;
    const eightHour = FUNDING_MODELS.binance; // same I and dampener, 8 h basis, cap not reached below
    for (let p = -0.002; p <= 0.002; p += 0.0001)
      expect(hl.uncappedRate(p)).toBe(eightHour.uncappedRate(p) / 8);
    for (const mark of [49_900, 50_000, 50_010, 50_050, 50_100]) {
      expect(rates({ exchange: 'hyperliquid', spot_price: 50_000, mark_price: mark })[0]).toBe(
        (rates({ exchange: 'binance', spot_price: 50_000, mark_price: mark })[0] as number) / 8,
      );
    }
    expect(run({ exchange: 'hyperliquid', ...worked }).summary.funding_interval_hours).toBe(1);
  });

  it('cme says basis convergence: zero funding, mark converging to the index by expiry', () => {
    const { periods, summary } = run({ exchange: 'cme', ...worked, num_periods: 60, use_soft_cap: true });
    expect(summary).toMatchObject({
      model: 'basis_convergence',
      has_funding: false,
      cap: null,
      cap_mode: 'none',
    });
    expect(summary.notes.join(' ')).toMatch(/no funding/i);
    expect(summary.expiry_ts_ms).toBe(summary.end_ts_ms);
    for (const p of periods) {
      expect(p.funding_rate).toBe(0);
      expect(p.payment).toBe(0);
      expect(p.cumulative_pnl).toBe(0);
    }
    expect(summary).toMatchObject({ total_payment: 0, mean_funding_rate: 0, annualized_funding_rate: 0 });
    const gap = (k: number) =>
      Math.abs((periods[k]?.mark_price as number) - (periods[k]?.index_price as number));
    expect(gap(0)).toBe(50);
    expect(gap(59)).toBeLessThan(5);
    expect(Math.abs(periods[59]?.premium_bps as number)).toBeLessThan(1);
  });

  it('sgx stays within its published ±0.35 % bounds', () => {
    for (const [spot, mark] of [
      [50_000, 50_050],
      [50_000, 60_000],
      [50_000, 40_000],
    ] as const) {
      for (const use_soft_cap of [false, true]) {
        const { periods } = run({
          exchange: 'sgx',
          spot_price: spot,
          mark_price: mark,
          num_periods: 365,
          use_soft_cap,
        });
        for (const p of periods) expect(Math.abs(p.funding_rate)).toBeLessThanOrEqual(0.0035);
      }
    }
    expect(rates({ exchange: 'sgx', spot_price: 50_000, mark_price: 60_000 })[0]).toBe(0.0035);
  });
});

describe('funding simulation: sign convention (positive rate → the long pays)', () => {
  it('a long pays and a short receives under a positive rate', () => {
    const long = run({ exchange: 'binance', ...worked, position_size: 2 }).periods[0];
    const short = run({ exchange: 'binance', ...worked, position_size: -2 }).periods[0];
    expect(long?.funding_rate).toBeGreaterThan(0);
    expect(long?.payment).toBe(-50.05);
    expect(short?.payment).toBe(50.05);
  });

  it('a long receives when the mark is below spot enough to make the rate negative', () => {
    const p = run({ exchange: 'bybit', spot_price: 50_000, mark_price: 49_950, position_size: 1 }).periods[0];
    expect(p?.funding_rate).toBe(-0.0005); // P = −0.001: F = P + clamp(0.0011, ±0.0005) = −0.0005
    expect(p?.payment).toBe(24.975); // 1 × 49,950 × 0.0005, received by the long
    const summary = run({
      exchange: 'bybit',
      spot_price: 50_000,
      mark_price: 49_950,
      position_size: 1,
    }).summary;
    expect(summary.gross_received).toBeGreaterThan(0);
  });

  it('a zero position sees the rates and pays nothing (never −0)', () => {
    const { periods } = run({ exchange: 'hyperliquid', ...worked, position_size: 0, num_periods: 5 });
    for (const p of periods) {
      expect(Object.is(p.payment, 0)).toBe(true);
      expect(p.funding_rate).not.toBe(0);
    }
  });
});

describe('funding simulation: requests refused', () => {
  it('refuses an unknown exchange, naming exchange and the allowed list', () => {
    const parsed = FundingRequest.safeParse({ exchange: 'kraken', ...worked });
    expect(parsed.success).toBe(false);
    const issue = parsed.error?.issues[0];
    expect(issue?.path).toEqual(['exchange']);
    expect(issue?.message).toContain(EXCHANGES.join(', '));
    expect(() => run({ exchange: 'kraken' as 'binance', ...worked })).toThrow(ZodError);
  });

  it.each([
    ['spot_price', { spot_price: 0 }],
    ['mark_price', { mark_price: -1 }],
    ['num_periods', { num_periods: 0 }],
    ['num_periods', { num_periods: 10_001 }],
    ['num_periods', { num_periods: 1.5 }],
    ['seed', { seed: -1 }],
    ['seed', { seed: 0.5 }],
    ['use_soft_cap', { use_soft_cap: 'yes' }],
    ['start_ts_ms', { start_ts_ms: -5 }],
  ])('refuses a bad %s', (field, patch) => {
    const parsed = FundingRequest.safeParse({ exchange: 'binance', ...worked, ...patch });
    expect(parsed.error?.issues[0]?.path).toEqual([field]);
  });

  it('refuses unknown fields and missing prices', () => {
    expect(FundingRequest.safeParse({ exchange: 'okx', ...worked, leverage: 10 }).success).toBe(false);
    expect(FundingRequest.safeParse({ exchange: 'okx', spot_price: 1 }).error?.issues[0]?.path).toEqual([
      'mark_price',
    ]);
  });
});
