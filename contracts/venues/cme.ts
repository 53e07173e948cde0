/** cme: its details as VENUES.md §7–§8 give them (contracts/venues.ts). */
import { fact, type InstrumentSpec, none, notFound, venue } from './facts.ts';

const cmeContract = (base: 'BTC' | 'ETH', symbol: string, tick: number, size: number): InstrumentSpec => ({
  base,
  symbol,
  lot_unit: 'contracts',
  tick_size: fact(tick, 'verified', 'CMESPEC', `${tick * size} USD per contract`),
  lot_size: fact(1, 'verified', 'CMESPEC'),
  contract_size: fact(size, 'verified', 'CMESPEC'),
  min_notional: none('not applicable: whole contracts'),
});

// biome-ignore format: one fact per line reads better unwrapped
export const CME = venue({
  exchange: 'cme',
  name: 'CME Group cryptocurrency futures',
  product: fact('cash-settled dated futures: Bitcoin (BTC), Micro Bitcoin (MBT), Ether (ETH), Micro Ether (MET)', 'verified', 'CMESPEC'),
  instrument_type: 'dated_future',
  funding: {
    has_funding: false,
    interval_hours: none('no funding: daily variation margin instead'),
    settlement_times: fact('final cash settlement to the CME CF Bitcoin Reference Rate (BTC) / Ether reference rate at 16:00 London on the last Friday of the contract month', 'verified', 'CMESPEC'),
    formula: fact('none: dated futures; the basis (future − index) converges to 0 at expiry', 'verified', 'CMESPEC'),
    interest_rate: none('not applicable'),
    interest_basis_hours: null,
    dampener: none('not applicable'),
    cap: none('not applicable'),
    premium_input: none('not applicable'),
    notional_price: none('not applicable'),
  },
  instruments: [cmeContract('BTC', 'BTC', 5, 5), cmeContract('BTC', 'MBT', 5, 0.1), cmeContract('ETH', 'ETH', 0.5, 50), cmeContract('ETH', 'MET', 0.5, 0.1)],
  maker_fee: notFound('exchange + clearing fee per contract (not collected)'),
  taker_fee: notFound('exchange + clearing fee per contract (not collected)'),
  trading_hours: fact('Sun–Fri 17:00–16:00 CT, daily 60-minute break from 16:00 CT', 'verified', 'CMESPEC'),
  settlement_currency: fact('USD (cash)', 'verified', 'CMESPEC'),
  max_leverage_btc: fact(null, 'secondary', 'SHEET', 'not applicable: exchange-set margin'),
  price_bands: fact('special price fluctuation limits (launch rule 7 % / 13 %, 20 % hard); current rule on CME "Price Limits"', 'secondary', 'CMESPEC'),
});
