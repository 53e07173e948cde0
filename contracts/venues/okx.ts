/** okx: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { clampFunding, crypto24x7, fact, notFound, venue } from './facts.ts';

// biome-ignore format: one fact per line reads better unwrapped
export const OKX = venue({
  exchange: 'okx',
  name: 'OKX perpetual swaps',
  product: fact('USDT-margined perpetual swaps', 'verified', 'OKXF'),
  instrument_type: 'perpetual',
  funding: {
    ...clampFunding('OKXF', 'verified'),
    interval_hours: fact(8, 'verified', 'OKXF', 'some instruments 4 h or 2 h'),
    settlement_times: notFound('every 8 h; clock times not collected'),
    formula: fact('since Apr 2025: F = clamp[P + clamp(I − P, ±0.05 %), floor, cap]; before: F = clamp[MA(mid premium − I), a, b] with I = 0', 'verified', 'OKXF'),
    cap: fact(0.00375, 'unverified', 'OKXF', 'older OKX cap table (BTC ±0.375 %, majors ±0.75 %); current caps are per instrument'),
    premium_input: fact('impact bid/ask vs index, weighted moving average per minute over the last N hours', 'verified', 'OKXF'),
    notional_price: fact('mark', 'verified', 'OKXF', '"position value"'),
  },
  instruments: [
    { base: 'BTC', symbol: 'BTC-USDT-SWAP', lot_unit: 'contracts',
      tick_size: fact(0.1, 'secondary', 'OKXSPEC'),
      lot_size: fact(0.01, 'secondary', 'OKXSPEC', 'lotSz, in contracts'),
      contract_size: fact(0.01, 'secondary', 'OKXSPEC', 'ctVal'),
      min_notional: notFound('not collected') },
    { base: 'ETH', symbol: 'ETH-USDT-SWAP', lot_unit: 'contracts',
      tick_size: fact(0.01, 'unverified', 'SHEET', 'confirm via instruments endpoint'),
      lot_size: notFound('not collected'),
      contract_size: notFound('ctVal not collected'),
      min_notional: notFound('not collected') },
  ],
  maker_fee: fact(0.0002, 'secondary', 'OKXSPEC', 'Lv1 perps; spot Lv1 0.08 % / 0.10 %'),
  taker_fee: fact(0.0005, 'secondary', 'OKXSPEC'),
  trading_hours: crypto24x7,
  settlement_currency: fact('USDT', 'secondary', 'SHEET'),
  max_leverage_btc: fact(100, 'unverified', 'SHEET'),
  price_bands: notFound('per-instrument limits (not collected)'),
});

// biome-ignore format: one fact per line reads better unwrapped
