/**
 * Totals of a funding run and the words that say what it assumed. Pure: takes the unrounded
 * per-period values `simulate.ts` computed and rounds only what it reports.
 */
import type { FundingRequest, FundingSummary } from '../../contracts/funding.ts';
import type { FundingVenueModel } from './model.ts';
import { PREMIUM_PROCESS } from './premium-path.ts';

const HOURS_PER_YEAR = 365 * 24;

/**
 * Money and bp values rounded to 12 significant digits: drops binary noise (25.025, not
 * 25.025000000000002) and never −0. Rates stay unrounded so that caps hold bit for bit.
 */
export const display = (x: number): number => Number(x.toPrecision(12)) || 0;

/** Unrounded values of one period. */
export type PeriodValues = {
  readonly rate: number;
  readonly uncapped: number;
  readonly capped: boolean;
  readonly payment: number;
};

const GENERAL_NOTES = [
  'Period 0 uses spot_price and mark_price exactly (premium P0 = (mark − spot) / spot). Later periods follow a seeded Ornstein–Uhlenbeck premium path (mean 0, half-life 24 h, stationary sd 5 bp, hourly samples averaged over each period); one seed gives every venue the same hourly path.',
  'The index is held at spot_price; mark = index × (1 + premium). The premium stands in for the venues’ impact-price premium index.',
  'Sign: a positive rate means longs pay shorts; payment is the cash flow to the position (negative = paid).',
  'Money and bp fields are rounded to 12 significant digits; funding_rate is unrounded.',
];

const SOFT_CAP_NOTE =
  'Soft cap: rate = cap · tanh(F / cap) instead of a hard clamp (a design choice; no venue publishes one). Strictly inside ±cap (held a few ulps inside where tanh rounds to 1, |F| ≳ 18.7 × cap), ≈ F when |F| ≪ cap.';

/** Summary of a run of `model` for `request`, from its unrounded periods. */
export function summarize(
  request: FundingRequest,
  model: FundingVenueModel,
  values: readonly PeriodValues[],
  initialPremium: number,
): FundingSummary {
  const n = values.length;
  const periodsPerDay = 24 / model.intervalHours;
  let total = 0;
  let paid = 0;
  let received = 0;
  let rateSum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let capped = 0;
  for (const v of values) {
    total += v.payment;
    if (v.payment < 0) paid -= v.payment;
    else received += v.payment;
    rateSum += v.rate;
    min = Math.min(min, v.rate);
    max = Math.max(max, v.rate);
    if (v.capped) capped++;
  }
  const mean = rateSum / n;
  const hasFunding = model.kind !== 'basis_convergence';
  const endTs = request.start_ts_ms + n * model.intervalHours * 3_600_000;
  const useSoft = hasFunding && request.use_soft_cap;
  return {
    model: model.kind,
    has_funding: hasFunding,
    funding_interval_hours: model.intervalHours,
    periods_per_day: periodsPerDay,
    num_periods: n,
    start_ts_ms: request.start_ts_ms,
    end_ts_ms: endTs,
    cap: model.cap,
    cap_mode: model.cap === null ? 'none' : request.use_soft_cap ? 'soft' : 'hard',
    interest_rate_per_period: model.interestPerPeriod,
    dampener: model.dampener,
    notional_price: model.notional,
    total_payment: display(total),
    gross_paid: display(paid),
    gross_received: display(received),
    mean_funding_rate: mean,
    mean_funding_rate_bps: display(mean * 1e4),
    annualized_funding_rate: mean * (HOURS_PER_YEAR / model.intervalHours),
    min_funding_rate: min,
    max_funding_rate: max,
    periods_capped: capped,
    initial_premium_bps: display(initialPremium * 1e4),
    initial_daily_payment: display((values[0]?.payment ?? 0) * periodsPerDay),
    expiry_ts_ms: hasFunding ? null : endTs,
    // The future converges to the (constant) index, so a position realises size × (index − mark).
    basis_carry_pnl: hasFunding
      ? null
      : display(request.position_size * (request.spot_price - request.mark_price)),
    premium_process: { ...PREMIUM_PROCESS },
    notes: [...model.notes, ...GENERAL_NOTES, ...(useSoft ? [SOFT_CAP_NOTE] : [])],
  };
}
