/**
 * Bybit USDT perpetual funding (BTCUSDT parameters).
 * https://www.bybit.com/en/announcement-info/fund-rate/
 */
import { VENUE_DETAILS } from '../../contracts/venues.ts';
import { perpetualModel } from './perpetual.ts';

export const bybitFunding = perpetualModel(VENUE_DETAILS.bybit, [
  'Bybit: F = P + clamp(I − P, ±0.05 %) every 8 h (00/08/16 UTC), I = 0.01 %/8 h, paid on the position value (mark × size).',
  // Bybit's page writes the band as clamp(I − P, 0.05 %, −0.05 %): same band, bounds listed high first.
  'Cap ±0.375 % is BTCUSDT upperFundingRate/lowerFundingRate from a 2024 instruments-info response; Bybit may widen it in volatile markets.',
]);
