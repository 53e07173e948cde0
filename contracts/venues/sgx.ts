/** sgx: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { fact, type InstrumentSpec, notFound, venue } from './facts.ts';

const sgxContract = (base: 'BTC' | 'ETH', size: number): InstrumentSpec => ({
  base,
  symbol: null,
  lot_unit: 'contracts',
  tick_size: fact(1, 'secondary', 'SGXNEWS', 'US$1 minimum price fluctuation'),
  lot_size: fact(1, 'unverified', 'SHEET', 'whole contracts assumed'),
  contract_size: fact(size, 'secondary', 'SGXNEWS'),
  min_notional: notFound('not found'),
});

// biome-ignore format: one fact per line reads better unwrapped
export const SGX = venue({
  exchange: 'sgx',
  name: 'SGX Derivatives crypto perpetual futures',
  product: fact('Bitcoin and Ether perpetual futures on the iEdge CoinDesk Crypto Indices, launched 24 Nov 2025; institutional, accredited and expert investors only', 'verified', 'SGXNEWS'),
  instrument_type: 'perpetual',
  funding: {
    has_funding: true,
    interval_hours: fact(24, 'unverified', 'SHEET', 'interval not found; daily assumed (the index reference rate is daily at 16:00 SGT; a 3 bp rate matches the usual 0.03 %/day)'),
    settlement_times: notFound('not found'),
    formula: fact('not public; modelled as the generic F = P + clamp(I − P, ±0.05 %), capped at ±0.35 %', 'unverified', 'SGXNEWS', 'a "stabilising range" keeps the average at 3 bp while trading stays within defined parameters'),
    interest_rate: fact(0.0003, 'unverified', 'SGXNEWS', '3 bp per interval: the stabilising-range average and the first-day rate'),
    interest_basis_hours: 24,
    dampener: fact(0.0005, 'unverified', 'SHEET', 'generic ±0.05 % assumed'),
    cap: fact(0.0035, 'secondary', 'SGXNEWS', '±35 bp'),
    premium_input: fact('perpetual vs iEdge CoinDesk index', 'secondary', 'SGXNEWS'),
    notional_price: fact('mark', 'unverified', 'SHEET', 'payment = contracts × contract size × price × F; which price is not stated'),
  },
  instruments: [sgxContract('BTC', 0.2), sgxContract('ETH', 5)],
  maker_fee: notFound('not published in the sources found'),
  taker_fee: notFound('not published in the sources found'),
  trading_hours: fact('T 07:05–16:00, T+1 16:05–05:15 (next day) SGT', 'secondary', 'SGXNEWS'),
  settlement_currency: fact('USD (cash)', 'secondary', 'SGXNEWS', 'a lower-quality source says USDT-settled'),
  max_leverage_btc: fact(null, 'unverified', 'SHEET', 'not applicable (exchange margin) per the sheet; not confirmed'),
  price_bands: notFound('not found'),
});
