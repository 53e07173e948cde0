/**
 * Hyperliquid perpetual funding: hourly, one eighth of the 8-hour rate, on the oracle price.
 * https://hyperliquid.gitbook.io/hyperliquid-docs/trading/funding
 */
import { VENUE_DETAILS } from '../../contracts/venues.ts';
import { perpetualModel } from './perpetual.ts';

// interval 1 h over an 8 h formula basis: perpetualModel's scale is 1/8, so each hour pays F8 / 8.
export const hyperliquidFunding = perpetualModel(VENUE_DETAILS.hyperliquid, [
  'Hyperliquid: the 8-hour rate F8 = P + clamp(I − P, ±0.05 %), I = 0.01 %/8 h, is paid every hour as F8 / 8, capped at 4 %/hour.',
  // Not the mark: a long's hourly payment is size × oracle × rate.
  'Premium and payments use the oracle price (spot_price), not the mark: payment = −size × oracle × rate.',
]);
