/**
 * CME Bitcoin and Ether futures: dated, cash-settled futures with NO funding. The carry of a
 * futures position is its basis, which converges to zero at expiry and is paid through daily
 * variation margin. https://www.cmegroup.com/trading/equity-index/us-index/bitcoin_contractSpecs_options.html
 */
import type { FundingVenueModel } from './model.ts';

export const cmeFunding: FundingVenueModel = {
  exchange: 'cme',
  kind: 'basis_convergence',
  // One period per trading day: CME settles variation margin daily.
  intervalHours: 24,
  cap: null,
  interestPerPeriod: null,
  dampener: null,
  notional: 'none',
  // Linear pull to zero: full basis at the start (k = 0, exactly the request's), zero at expiry (k = n).
  premium: (pathPremium, k, n) => pathPremium * ((n - k) / n),
  uncappedRate: () => 0,
  notes: [
    'CME has NO funding: BTC/MBT/ETH/MET are dated, cash-settled futures. Every funding rate and payment is 0.',
    'Model basis_convergence: the basis (mark − index) follows the seeded premium path scaled by the time left, so it converges to zero at expiry; expiry is assumed at the end of the last period (real contracts expire on the last Friday of the month at 16:00 London, settling to the CME CF reference rate).',
    'The carry is realised through daily variation margin, not funding: summary.basis_carry_pnl = position_size × (index − mark) at the start.',
  ],
};
