/**
 * What a venue's funding model is: the numbers the simulation needs and the two functions that
 * differ between perpetuals and dated futures. One implementation per venue file, collected in
 * `registry.ts`; `simulate.ts` runs any of them the same way.
 */
import type { FundingModelKind } from '../../contracts/funding.ts';
import type { Exchange } from '../../contracts/venues.ts';

/** One venue's funding model. Rates are fractions per period (0.0005 = 0.05 %). */
export type FundingVenueModel = {
  readonly exchange: Exchange;
  readonly kind: FundingModelKind;
  /** Hours per period: the funding interval (CME: 24, one daily settlement). */
  readonly intervalHours: number;
  /** |rate| bound per period; null when there is no funding. */
  readonly cap: number | null;
  /** Interest component per period as applied (I × scale); null when there is no funding. */
  readonly interestPerPeriod: number | null;
  /** Bound of clamp(I − P, ±d); null when there is no funding. */
  readonly dampener: number | null;
  /** Price payments are computed on: the mark, the oracle (index), or none. */
  readonly notional: 'mark' | 'oracle' | 'none';
  /**
   * The venue's premium in period `k` of `n`, from the seeded path's premium for that period
   * (`pathPremium`; period 0's is the request's exactly). Must return `pathPremium` unchanged at k = 0.
   */
  premium(pathPremium: number, k: number, n: number): number;
  /** The rate for one period before the cap. */
  uncappedRate(premium: number): number;
  /** Venue assumptions and caveats, in words, copied into the result. */
  readonly notes: readonly string[];
};
