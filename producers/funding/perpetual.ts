/**
 * Builds a perpetual's funding model from its venue details (contracts/venues.ts), so interval,
 * interest, dampener and cap are read from the one table of venue facts rather than restated.
 * Unverified parameters are named in the model's notes, so a result says what it rests on.
 */
import type { Fact, VenueDetails } from '../../contracts/venues.ts';
import type { FundingVenueModel } from './model.ts';
import { premiumInterestRate } from './rate.ts';

/** The value of a funding fact the model cannot do without. */
function required<T>(details: VenueDetails, field: string, f: Fact<T | null>): T {
  if (f.value === null) throw new Error(`${details.exchange}: funding.${field} is needed by the model`);
  return f.value;
}

/** "unverified: funding.dampener = 0.0005 (why)" for each unverified fact the model uses. */
function unverifiedNotes(details: VenueDetails): string[] {
  const used = ['interval_hours', 'interest_rate', 'dampener', 'cap', 'notional_price', 'formula'] as const;
  return used
    .filter((field) => details.funding[field].status === 'unverified')
    .map((field) => {
      const f = details.funding[field];
      return `unverified: funding.${field} = ${String(f.value)}${f.note === undefined ? '' : ` (${f.note})`}`;
    });
}

/** A premium + clamped-interest perpetual: F = [P + clamp(I − P, ±d)] × interval / basis, capped. */
export function perpetualModel(details: VenueDetails, notes: readonly string[]): FundingVenueModel {
  const { funding } = details;
  const intervalHours = required(details, 'interval_hours', funding.interval_hours);
  const interest = required(details, 'interest_rate', funding.interest_rate);
  const dampener = required(details, 'dampener', funding.dampener);
  const cap = required(details, 'cap', funding.cap);
  const notional = required(details, 'notional_price', funding.notional_price);
  const basisHours = funding.interest_basis_hours;
  if (basisHours === null) throw new Error(`${details.exchange}: funding.interest_basis_hours is needed`);
  const scale = intervalHours / basisHours;
  return {
    exchange: details.exchange,
    kind: 'premium_interest_clamp',
    intervalHours,
    cap,
    interestPerPeriod: interest * scale,
    dampener,
    notional,
    premium: (pathPremium) => pathPremium,
    uncappedRate: (premium) => premiumInterestRate(premium, interest, dampener, scale),
    notes: [...notes, ...unverifiedNotes(details)],
  };
}
