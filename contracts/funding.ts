/**
 * Funding simulation: the request of `POST /mcp/simulate_funding_regime` (and the MCP tool) and
 * the result `simulateFunding` (producers/funding) returns.
 *
 * Sign convention (VENUES.md §7): a positive funding rate means longs pay shorts. `payment` is the
 * cash flow TO the simulated position, in quote currency: payment = −position_size × price × rate.
 * So a long (size > 0) under a positive rate has a negative payment (it pays); a short receives.
 *
 * Nothing depends on the wall clock: period times start at `start_ts_ms`, which has a fixed
 * default, and the premium path after period 0 is a pure function of `seed`.
 */
import { z } from 'zod';
import { Exchange } from './venues.ts';

/** Default first period start: 2026-01-01T00:00:00Z, on every venue's settlement grid. */
export const DEFAULT_FUNDING_START_TS_MS = Date.UTC(2026, 0, 1);
/** Latest accepted start: 2100-01-01T00:00:00Z. */
export const MAX_FUNDING_START_TS_MS = Date.UTC(2100, 0, 1);
/** Most periods one request may simulate (10,000 h on Hyperliquid, ≈ 27 years daily on CME/SGX). */
export const MAX_FUNDING_PERIODS = 10_000;
/** Largest |price| and |position_size| accepted, so that every product stays far from overflow. */
export const MAX_FUNDING_MAGNITUDE = 1e12;

const price = z.number().positive().max(MAX_FUNDING_MAGNITUDE);

/** A funding simulation request. Unknown fields are rejected; parsing fills every default. */
export const FundingRequest = z
  .object({
    exchange: Exchange.describe('Venue: binance, hyperliquid, okx, bybit, cme or sgx.'),
    spot_price: price.describe(
      'Index (spot / oracle) price, quote currency per base unit; > 0. Held constant over the run.',
    ),
    mark_price: price.describe(
      'Perpetual mark (CME: futures) price now, quote per base unit; > 0. Period 0 premium = (mark − spot) / spot.',
    ),
    position_size: z
      .number()
      .min(-MAX_FUNDING_MAGNITUDE)
      .max(MAX_FUNDING_MAGNITUDE)
      .default(1)
      .describe(
        'Signed position in base units (BTC for a BTC perp): > 0 long, < 0 short, 0 = rates only. Default 1.',
      ),
    num_periods: z
      .number()
      .int()
      .min(1)
      .max(MAX_FUNDING_PERIODS)
      .default(1)
      .describe(
        `Funding periods to simulate, each one venue interval long (CME: one trading day); 1…${MAX_FUNDING_PERIODS}, default 1.`,
      ),
    use_soft_cap: z
      .boolean()
      .default(false)
      .describe('Saturate smoothly, cap · tanh(rate / cap), instead of clamping at the cap. Default false.'),
    seed: z
      .number()
      .int()
      .min(0)
      .max(Number.MAX_SAFE_INTEGER)
      .default(42)
      .describe('Seed of the premium path after period 0; equal requests give equal results. Default 42.'),
    start_ts_ms: z
      .number()
      .int()
      .min(0)
      .max(MAX_FUNDING_START_TS_MS)
      .default(DEFAULT_FUNDING_START_TS_MS)
      .describe('Start of period 0, Unix ms (not snapped to the venue grid). Default 2026-01-01T00:00:00Z.'),
  })
  .strict();
export type FundingRequest = z.output<typeof FundingRequest>;
export type FundingRequestInput = z.input<typeof FundingRequest>;

/** How a venue turns the premium into payments. */
export type FundingModelKind =
  /** Perpetual: F = [P + clamp(I − P, ±d)] × interval / basis, then capped (Binance, Bybit, OKX, SGX, Hyperliquid). */
  | 'premium_interest_clamp'
  /** Dated future (CME): no funding; the basis converges to zero at expiry. */
  | 'basis_convergence';

/** One funding period (CME: one trading day). */
export type FundingPeriod = {
  /** 0-based. */
  period_index: number;
  /** Period start, Unix ms. */
  start_ts_ms: number;
  /** When this period's funding settles (its end), Unix ms; CME: the daily settlement. */
  next_funding_time: number;
  /** Funding rate for the period after the cap, a fraction (0.0005 = 0.05 %); 0 on CME. */
  funding_rate: number;
  /** `funding_rate` in basis points. */
  funding_rate_bps: number;
  /** The rate before the cap, a fraction; 0 on CME. */
  uncapped_funding_rate: number;
  /** True when |uncapped rate| exceeded the cap (clamped, or deep in the soft cap's saturation). */
  capped: boolean;
  /** Premium of mark over index, (mark − index) / index, in bp, averaged over the period; CME: the basis. */
  premium_bps: number;
  /** Perpetual mark (CME: futures) price for the period, quote per base unit. */
  mark_price: number;
  /** Index (spot / oracle) price, quote per base unit. */
  index_price: number;
  /** Cash flow to the position, quote currency: −position_size × notional price × funding_rate. */
  payment: number;
  /** Sum of `payment` up to and including this period, quote currency. */
  cumulative_pnl: number;
};

/** The premium process after period 0 (an exact hourly OU discretisation). */
export type PremiumProcess = {
  kind: 'ornstein_uhlenbeck';
  /** Long-run premium, bp. */
  mean_bps: number;
  /** Hours for a deviation from the mean to halve. */
  half_life_hours: number;
  /** Standard deviation of the stationary premium, bp. */
  stationary_sd_bps: number;
  /** Sampling step of the path, hours; a period's premium is the mean of its hourly samples. */
  step_hours: number;
};

/** Totals and model description of a run. */
export type FundingSummary = {
  model: FundingModelKind;
  /** False on CME. */
  has_funding: boolean;
  /** Hours per period (CME: 24, one trading day). */
  funding_interval_hours: number;
  periods_per_day: number;
  num_periods: number;
  /** Start of period 0 and end of the last period, Unix ms. */
  start_ts_ms: number;
  end_ts_ms: number;
  /** |rate| bound per period, a fraction; null on CME. */
  cap: number | null;
  cap_mode: 'hard' | 'soft' | 'none';
  /** Interest component per period as applied, a fraction; null on CME. */
  interest_rate_per_period: number | null;
  /** Bound d of clamp(I − P, ±d), a fraction; null on CME. */
  dampener: number | null;
  /** Price payments are computed on. */
  notional_price: 'mark' | 'oracle' | 'none';
  /** Net cash flow to the position over the run (= last cumulative_pnl), quote currency. */
  total_payment: number;
  /** Sum of payments made (≥ 0), quote currency. */
  gross_paid: number;
  /** Sum of payments received (≥ 0), quote currency. */
  gross_received: number;
  /** Mean funding rate per period, a fraction, and in bp. */
  mean_funding_rate: number;
  mean_funding_rate_bps: number;
  /** mean_funding_rate × periods per 365-day year (simple, not compounded). */
  annualized_funding_rate: number;
  min_funding_rate: number;
  max_funding_rate: number;
  /** Periods whose uncapped rate was beyond the cap. */
  periods_capped: number;
  /** (mark − spot) / spot of the request, bp. */
  initial_premium_bps: number;
  /** Period 0's payment × periods per day: the daily run-rate at today's premium (VENUES.md §7.1 "per day"). */
  initial_daily_payment: number;
  /** CME: expiry, assumed at the end of the last period, Unix ms; null otherwise. */
  expiry_ts_ms: number | null;
  /** CME: P&L the position realises through variation margin as the basis converges, quote currency; null otherwise. */
  basis_carry_pnl: number | null;
  premium_process: PremiumProcess;
  /** Assumptions, venue caveats and unverified parameters, in words. */
  notes: string[];
};

/** What `simulateFunding` returns. */
export type FundingResult = {
  /** The request with every default filled. */
  request: FundingRequest;
  periods: FundingPeriod[];
  summary: FundingSummary;
};
