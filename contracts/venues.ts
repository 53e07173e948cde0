/**
 * Venue details (`GET /mcp/venues/{exchange}`, `get_venue_details`) and the `Exchange` enum shared
 * with the funding simulation. Pure data transcribed from VENUES.md §7–§8; the funding models in
 * `producers/funding/` read their interval, interest, dampener and cap from here, so the numbers
 * live in one place.
 *
 * Every item is a `Fact`: its value, the research sheet's status word for it and the source tag(s)
 * (resolved in `VENUE_SOURCES`). A venue's `unverified` lists the dotted paths of its facts whose
 * status is `unverified`, so a client can see at a glance what not to rely on. Items the sheet
 * could not find are `null` with status `unverified`.
 */
import { z } from 'zod';

/** Venues of the funding simulation and of venue details, in the spec's order. */
export const EXCHANGES = ['binance', 'hyperliquid', 'okx', 'bybit', 'cme', 'sgx'] as const;

/** One of `EXCHANGES`; anything else fails with a message that lists the allowed names. */
export const Exchange = z.enum(EXCHANGES, {
  error: (issue) =>
    issue.input === undefined ? 'required' : `unknown exchange; expected one of ${EXCHANGES.join(', ')}`,
});
export type Exchange = z.infer<typeof Exchange>;

/**
 * VENUES.md status words: `verified` = read in primary docs or real data; `secondary` = a
 * third-party page or fixture quoting the venue (or untagged in the sheet); `unverified` = stated
 * but not confirmed, or not found at all.
 */
export type FactStatus = 'verified' | 'secondary' | 'unverified';

/** One venue fact with its provenance. */
export type Fact<T> = {
  readonly value: T;
  readonly status: FactStatus;
  /** Source tag(s) of VENUES.md, e.g. `BFAQ via BNOTE` (see `VENUE_SOURCES`). */
  readonly source: string;
  /** Why the value is what it is, conflicts, or what it does not cover. */
  readonly note?: string;
};

/** One listed contract of a venue. */
export type InstrumentSpec = {
  /** Underlying asset. */
  readonly base: 'BTC' | 'ETH';
  /** The venue's symbol; null when no public symbol was found. */
  readonly symbol: string | null;
  /** Minimum price step, quote currency (USD/USDT/USDC) per 1 base unit. */
  readonly tick_size: Fact<number | null>;
  /** Minimum quantity step, in `lot_unit`. */
  readonly lot_size: Fact<number | null>;
  /** `base`: quantities are base units (BTC); `contracts`: quantities count contracts. */
  readonly lot_unit: 'base' | 'contracts';
  /** Base units per contract (1 where the venue trades base units directly). */
  readonly contract_size: Fact<number | null>;
  /** Smallest order notional, quote currency; null where none is known. */
  readonly min_notional: Fact<number | null>;
};

/** Funding mechanics (VENUES.md §7), as the funding simulation uses them. */
export type VenueFunding = {
  /** False for dated futures (CME): no funding, the basis converges at expiry. */
  readonly has_funding: boolean;
  /** Hours between funding settlements; null without funding. */
  readonly interval_hours: Fact<number | null>;
  /** When settlements happen (UTC unless stated). */
  readonly settlement_times: Fact<string | null>;
  /** The venue's formula in words. */
  readonly formula: Fact<string>;
  /** Interest component I, a fraction per `interest_basis_hours` (0.0001 = 0.01 %). */
  readonly interest_rate: Fact<number | null>;
  /** Hours the interest rate (and the premium formula) is quoted over; the rate per interval is scaled by interval / basis. */
  readonly interest_basis_hours: number | null;
  /** Bound of clamp(I − P, −d, +d), a fraction (0.0005 = 0.05 %). */
  readonly dampener: Fact<number | null>;
  /** Symmetric bound on |funding rate| per interval for BTC/ETH, a fraction. */
  readonly cap: Fact<number | null>;
  /** What the premium P measures. */
  readonly premium_input: Fact<string | null>;
  /** Price a payment is computed on: size × price × rate. */
  readonly notional_price: Fact<'mark' | 'oracle' | null>;
};

/** Everything `GET /mcp/venues/{exchange}` returns. */
export type VenueDetails = {
  readonly exchange: Exchange;
  readonly name: string;
  readonly product: Fact<string>;
  readonly instrument_type: 'perpetual' | 'dated_future';
  readonly funding: VenueFunding;
  /** BTC and ETH contracts (at least one each). */
  readonly instruments: readonly InstrumentSpec[];
  /** Base-tier maker fee, fraction of notional (0.0002 = 0.02 %); negative would be a rebate. */
  readonly maker_fee: Fact<number | null>;
  /** Base-tier taker fee, fraction of notional. */
  readonly taker_fee: Fact<number | null>;
  readonly trading_hours: Fact<string>;
  /** Currency positions are margined and settled in. */
  readonly settlement_currency: Fact<string>;
  /** Highest leverage on BTC, × (null where the exchange sets margin instead). */
  readonly max_leverage_btc: Fact<number | null>;
  readonly price_bands: Fact<string | null>;
  /** Dotted paths of the facts above whose status is `unverified` (e.g. `instruments.1.tick_size`). */
  readonly unverified: readonly string[];
};

/** Where each source tag points (VENUES.md "Source tags"). */
export const VENUE_SOURCES: Readonly<Record<string, string>> = {
  BFAQ: 'binance.com/en/support/faq/introduction-to-binance-futures-funding-rates-360033525031',
  BNOTE: 'public research note quoting BFAQ and a GET /fapi/v1/fundingInfo pull of 2026-09-26 (secondary)',
  BFUT: 'developers.binance.com/docs/derivatives/usds-margined-futures',
  BFEE: 'binance.com/en/support/faq/binance-futures-fee-structure-fee-calculations-360033544231',
  NAUT: 'github nautechsystems/nautilus_trader adapter test data (real exchange payloads)',
  HLFUND: 'hyperliquid.gitbook.io/hyperliquid-docs/trading/funding',
  HLSPEC:
    'hyperliquid.gitbook.io/hyperliquid-docs/trading/{contract-specifications,fees}, …/tick-and-lot-size',
  OKXF: 'okx.com/help/okx-to-optimize-funding-rate-calculation; OKX Apr 2025 funding formula notice',
  OKXSPEC: 'public BTC-USDT-SWAP fixtures; okx.com/fees; third-party fee table (secondary)',
  BYBF: 'bybit.com/en/announcement-info/fund-rate/; Bybit help "Introduction to Funding Rate"',
  BYSPEC: 'a Bybit V5 instruments-info response in public code; third-party fee page (secondary)',
  CMESPEC: 'cmegroup.com bitcoin/micro/ether contract specifications (price limits: secondary)',
  SGXNEWS: 'news coverage of the SGX BTC/ETH perpetual launch, 24 Nov 2025 (secondary)',
  SHEET: 'VENUES.md itself, where an item carries no source tag',
};

const fact = <T>(value: T, status: FactStatus, source: string, note?: string): Fact<T> =>
  note === undefined ? { value, status, source } : { value, status, source, note };
const notFound = (note: string): Fact<null> => fact(null, 'unverified', 'SHEET', note);
const crypto24x7 = fact('24/7', 'secondary', 'SHEET', 'untagged in the research sheet');
const none = (note: string): Fact<null> => fact(null, 'verified', 'CMESPEC', note);

/** Dotted paths of every fact under `node` whose status is `unverified`. */
function unverifiedPaths(node: unknown, path: string[] = []): string[] {
  if (node === null || typeof node !== 'object') return [];
  const record = node as Record<string, unknown>;
  if ('status' in record && 'value' in record) return record.status === 'unverified' ? [path.join('.')] : [];
  return Object.entries(record).flatMap(([key, child]) => unverifiedPaths(child, [...path, key]));
}

/** Adds the `unverified` index to a venue. */
const venue = (details: Omit<VenueDetails, 'unverified'>): VenueDetails =>
  Object.freeze({ ...details, unverified: Object.freeze(unverifiedPaths(details)) });

/** Clamp-style perp funding (Binance, Bybit, OKX), 8 h, the common numbers. */
const clampFunding = (
  source: string,
  status: FactStatus,
): Pick<VenueFunding, 'has_funding' | 'interest_basis_hours' | 'interest_rate' | 'dampener'> => ({
  has_funding: true,
  interest_basis_hours: 8,
  interest_rate: fact(0.0001, status, source, '0.03 %/day = 0.01 % per 8 h'),
  dampener: fact(0.0005, status, source),
});

// biome-ignore format: one fact per line reads better unwrapped
const BINANCE = venue({
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
const HYPERLIQUID = venue({
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
const OKX = venue({
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
const BYBIT = venue({
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
const CME = venue({
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
const SGX = venue({
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

/** Every venue's details, keyed by exchange. */
export const VENUE_DETAILS: Readonly<Record<Exchange, VenueDetails>> = Object.freeze({
  binance: BINANCE,
  hyperliquid: HYPERLIQUID,
  okx: OKX,
  bybit: BYBIT,
  cme: CME,
  sgx: SGX,
});

/** Details of `exchange` (exact lower-case name), or null when it is not one of `EXCHANGES`. */
export function venueDetails(exchange: string): VenueDetails | null {
  const parsed = Exchange.safeParse(exchange);
  return parsed.success ? VENUE_DETAILS[parsed.data] : null;
}
