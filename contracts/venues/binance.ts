/** binance: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { clampFunding, crypto24x7, fact, notFound, venue } from './facts.ts';

// biome-ignore format: one fact per line reads better unwrapped
export const BINANCE = venue({
  exchange: 'binance',
  name: 'Binance USD-M futures',
  product: fact('linear USDT-margined perpetuals (also spot)', 'verified', 'BFUT'),
  instrument_type: 'perpetual',
  funding: {
    ...clampFunding('BFAQ via BNOTE', 'secondary'),
    interval_hours: fact(8, 'verified', 'BFAQ', 'default (BTCUSDT); many symbols now 4 h (469 of 791 on 2026-09-26) and some 1 h [BNOTE]'),
    settlement_times: fact('00:00, 08:00, 16:00 UTC (±15 s)', 'verified', 'BFAQ'),
    formula: fact('F = [P + clamp(I − P, −0.05 %, +0.05 %)] / (8 / N) for an N-hour interval, then clamped to [floor, cap]', 'secondary', 'BFAQ via BNOTE'),
    cap: fact(0.003, 'secondary', 'BNOTE', 'BTC/ETH: ±0.75 × maintenance margin ratio = ±0.30 %; several alts ±0.375 %, others ±2 %; overrides via fundingInfo'),
    premium_input: fact('impact bid/ask vs index, 5-s samples, time-weighted over the interval; impact margin notional = 200 USDT / IMR at max leverage', 'verified', 'BFAQ'),
    notional_price: fact('mark', 'verified', 'BFAQ'),
  },
  instruments: [
    { base: 'BTC', symbol: 'BTCUSDT', lot_unit: 'base',
      tick_size: fact(0.1, 'verified', 'NAUT', 'spot BTCUSDT: 0.01 (unverified)'),
      lot_size: fact(0.001, 'verified', 'NAUT'),
      contract_size: fact(1, 'verified', 'NAUT'),
      min_notional: fact(5, 'verified', 'NAUT') },
    { base: 'ETH', symbol: 'ETHUSDT', lot_unit: 'base',
      tick_size: fact(0.01, 'unverified', 'SHEET', 'confirm via exchangeInfo'),
      lot_size: notFound('not collected'),
      contract_size: fact(1, 'secondary', 'SHEET', 'linear perp traded in base units'),
      min_notional: notFound('not collected') },
  ],
  maker_fee: fact(0.0002, 'verified', 'BFEE', '10 % off when paying fees in BNB'),
  taker_fee: fact(0.0005, 'verified', 'BFEE'),
  trading_hours: crypto24x7,
  settlement_currency: fact('USDT', 'secondary', 'SHEET'),
  max_leverage_btc: fact(125, 'unverified', 'SHEET', 'BTCUSDT, tiered by notional'),
  price_bands: fact('PERCENT_PRICE filters; triggerProtect 0.05', 'verified', 'NAUT'),
});

// biome-ignore format: one fact per line reads better unwrapped
