/**
 * OKX USDT-margined swap funding, the formula in force since April 2025.
 * https://www.okx.com/help/okx-to-optimize-funding-rate-calculation
 */
import { VENUE_DETAILS } from '../../contracts/venues.ts';
import { perpetualModel } from './perpetual.ts';

export const okxFunding = perpetualModel(VENUE_DETAILS.okx, [
  'OKX (formula since Apr 2025): F = clamp[P + clamp(I − P, ±0.05 %), floor, cap] every 8 h, I = 0.01 %/8 h, paid on the position value (mark × size).',
  // The older formula is what OKX rates before April 2025 were computed with; say what it would give.
  'The pre-2025 formula clamp[MA(premium) − I, floor, cap] with I = 0 has no dampener: it would pay the premium itself (0.1 % instead of 0.05 % in the VENUES.md §7.1 example).',
]);
