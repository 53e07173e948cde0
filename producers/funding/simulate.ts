/**
 * `simulateFunding(request) -> result`: runs a venue's funding model over a seeded premium path.
 * Deterministic: the result is a pure function of the request (no clock, no global state).
 */
import {
  type FundingPeriod,
  FundingRequest,
  type FundingRequestInput,
  type FundingResult,
} from '../../contracts/funding.ts';
import { periodPremiums } from './premium-path.ts';
import { capRate } from './rate.ts';
import { fundingModel } from './registry.ts';
import { display, type PeriodValues, summarize } from './summary.ts';

const HOUR_MS = 3_600_000;

/**
 * Simulates `num_periods` funding periods of `exchange`. Parses the request first (a parsed one
 * passes unchanged), so it throws a ZodError naming the field — e.g. `exchange` with the allowed
 * list — when the request is invalid.
 */
export function simulateFunding(input: FundingRequestInput): FundingResult {
  const request = FundingRequest.parse(input);
  const model = fundingModel(request.exchange);
  const n = request.num_periods;
  const index = request.spot_price;
  const initialPremium = (request.mark_price - index) / index;
  const path = periodPremiums(request.seed, initialPremium, n, model.intervalHours);
  const intervalMs = model.intervalHours * HOUR_MS;

  const periods: FundingPeriod[] = [];
  const values: PeriodValues[] = [];
  let cumulative = 0;
  for (let k = 0; k < n; k++) {
    const premium = model.premium(path[k] ?? 0, k, n);
    // Period 0 reports the request's mark itself, not index × (1 + P0) with its rounding.
    const mark = k === 0 ? request.mark_price : index * (1 + premium);
    const uncapped = model.uncappedRate(premium);
    const rate = model.cap === null ? uncapped : capRate(uncapped, model.cap, request.use_soft_cap);
    const notional = model.notional === 'mark' ? mark : model.notional === 'oracle' ? index : 0;
    // Cash flow to the position: a positive rate makes longs (size > 0) pay.
    const payment = -(request.position_size * notional * rate) || 0;
    cumulative += payment;
    const capped = model.cap !== null && Math.abs(uncapped) > model.cap;
    values.push({ rate, uncapped, capped, payment });
    const start = request.start_ts_ms + k * intervalMs;
    periods.push({
      period_index: k,
      start_ts_ms: start,
      next_funding_time: start + intervalMs,
      funding_rate: rate,
      funding_rate_bps: display(rate * 1e4),
      uncapped_funding_rate: uncapped,
      capped,
      premium_bps: display(premium * 1e4),
      mark_price: mark,
      index_price: index,
      payment: display(payment),
      cumulative_pnl: display(cumulative),
    });
  }
  return { request, periods, summary: summarize(request, model, values, initialPremium) };
}
