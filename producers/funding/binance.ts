/**
 * Binance USD-M perpetual funding (BTCUSDT parameters).
 * https://www.binance.com/en/support/faq/introduction-to-binance-futures-funding-rates-360033525031
 */
import { VENUE_DETAILS } from '../../contracts/venues.ts';
import { perpetualModel } from './perpetual.ts';

export const binanceFunding = perpetualModel(VENUE_DETAILS.binance, [
  'Binance: F = P + clamp(I − P, ±0.05 %) every 8 h (00/08/16 UTC), I = 0.01 %/8 h, paid on mark × size.',
  'Cap ±0.30 % is the BTC/ETH cap (0.75 × maintenance margin ratio); other symbols use ±0.375 % to ±2 %, and many settle every 4 h or 1 h: not modelled.',
]);
