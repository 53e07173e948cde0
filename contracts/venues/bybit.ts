/** bybit: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { clampFunding, crypto24x7, fact, notFound, venue } from './facts.ts';

// biome-ignore format: one fact per line reads better unwrapped
export const BYBIT = venue({
  exchange: 'bybit',
  name: 'Bybit USDT perpetuals',
  product: fact('USDT linear perpetuals', 'secondary', 'BYSPEC'),
  instrument_type: 'perpetual',
  funding: {
    ...clampFunding('BYBF', 'verified'),
    interval_hours: fact(8, 'verified', 'BYBF, BYSPEC', 'fundingInterval 480 min for BTCUSDT; some symbols 4 h or 1 h'),
    settlement_times: fact('00:00, 08:00, 16:00 UTC', 'verified', 'BYBF'),
    formula: fact('F = P + clamp(I − P, −0.05 %, +0.05 %), kept within [lowerFundingRate, upperFundingRate]', 'verified', 'BYBF'),
    cap: fact(0.00375, 'secondary', 'BYSPEC', 'BTCUSDT upperFundingRate 0.00375 (2024 response); may be widened in volatility'),
    premium_input: fact('impact prices vs index every minute, TWAP with weights 1…480 over 8 h', 'verified', 'BYBF'),
    notional_price: fact('mark', 'verified', 'BYBF', '"position value"'),
  },
  instruments: [
    { base: 'BTC', symbol: 'BTCUSDT', lot_unit: 'base',
      tick_size: fact(0.1, 'secondary', 'BYSPEC'),
      lot_size: fact(0.001, 'secondary', 'BYSPEC', 'qtyStep'),
      contract_size: fact(1, 'secondary', 'BYSPEC'),
      min_notional: notFound('not collected') },
    { base: 'ETH', symbol: 'ETHUSDT', lot_unit: 'base',
      tick_size: fact(0.01, 'unverified', 'SHEET'),
      lot_size: notFound('not collected'),
      contract_size: fact(1, 'secondary', 'SHEET', 'linear perp traded in base units'),
      min_notional: notFound('not collected') },
  ],
  maker_fee: fact(0.0002, 'secondary', 'BYSPEC', 'non-VIP'),
  taker_fee: fact(0.00055, 'secondary', 'BYSPEC', 'non-VIP'),
  trading_hours: crypto24x7,
  settlement_currency: fact('USDT', 'secondary', 'BYSPEC', 'settleCoin'),
  max_leverage_btc: fact(100, 'unverified', 'BYSPEC', 'only seen in a test fixture'),
  price_bands: fact('priceLimitRatioX / priceLimitRatioY fields exist', 'secondary', 'BYSPEC'),
});
