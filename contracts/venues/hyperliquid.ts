/** hyperliquid: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { crypto24x7, fact, notFound, venue } from './facts.ts';

// biome-ignore format: one fact per line reads better unwrapped
export const HYPERLIQUID = venue({
  exchange: 'hyperliquid',
  name: 'Hyperliquid perpetuals',
  product: fact('USDC-margined linear perpetuals; oracle in USDT (quanto-like)', 'verified', 'HLSPEC'),
  instrument_type: 'perpetual',
  funding: {
    has_funding: true,
    interval_hours: fact(1, 'verified', 'HLFUND'),
    settlement_times: fact('every hour', 'verified', 'HLFUND'),
    formula: fact('8-hour rate F8 = P + clamp(I − P, −0.05 %, +0.05 %); each hour pays F8 / 8 on the oracle price, capped at 4 %/hour', 'verified', 'HLFUND'),
    interest_rate: fact(0.0001, 'verified', 'HLFUND', '0.01 % per 8 h = 0.00125 %/h (≈ 11.6 % APR to shorts)'),
    interest_basis_hours: 8,
    dampener: fact(0.0005, 'unverified', 'HLFUND', 'docs say 0.05 %; June 2023 fundingHistory rows fit 0.03 % exactly [HLSDK]'),
    cap: fact(0.04, 'verified', 'HLFUND', '4 % per hour, the same for all assets'),
    premium_input: fact('[max(impact bid − oracle, 0) − max(oracle − impact ask, 0)] / oracle, 5-s samples averaged over the hour; impact notional 20,000 USDC for BTC/ETH', 'verified', 'HLFUND, HLSPEC'),
    notional_price: fact('oracle', 'verified', 'HLFUND'),
  },
  instruments: [
    { base: 'BTC', symbol: 'BTC', lot_unit: 'base',
      tick_size: fact(1, 'verified', 'HLSPEC', 'price-dependent: 5 significant figures, at most 6 − szDecimals decimals, integers always allowed → 1 USD above 10,000'),
      lot_size: fact(0.00001, 'verified', 'NAUT', 'szDecimals 5'),
      contract_size: fact(1, 'verified', 'HLSPEC'),
      min_notional: notFound('not collected') },
    { base: 'ETH', symbol: 'ETH', lot_unit: 'base',
      tick_size: fact(0.1, 'verified', 'HLSPEC', 'price-dependent (5 significant figures): 0.1 between 1,000 and 9,999'),
      lot_size: fact(0.0001, 'verified', 'NAUT', 'szDecimals 4'),
      contract_size: fact(1, 'verified', 'HLSPEC'),
      min_notional: notFound('not collected') },
  ],
  maker_fee: fact(0.00015, 'verified', 'HLSPEC', 'perps tier 0; spot 0.04 % / 0.07 %'),
  taker_fee: fact(0.00045, 'verified', 'HLSPEC'),
  trading_hours: crypto24x7,
  settlement_currency: fact('USDC', 'verified', 'HLSPEC'),
  max_leverage_btc: fact(40, 'verified', 'NAUT', 'ETH 25×; tiered by notional'),
  price_bands: fact('max market order value 30 M USD (assets ≥ 25× leverage); limit orders 10× that', 'verified', 'HLSPEC'),
});

// biome-ignore format: one fact per line reads better unwrapped
