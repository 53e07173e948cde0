/**
 * What every venue's details are made of (contracts/venues.ts): the `Exchange` enum, the fact
 * types and source tags, and the helpers each venue's file builds its facts with. Pure data.
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

export const fact = <T>(value: T, status: FactStatus, source: string, note?: string): Fact<T> =>
  note === undefined ? { value, status, source } : { value, status, source, note };
export const notFound = (note: string): Fact<null> => fact(null, 'unverified', 'SHEET', note);
export const crypto24x7 = fact('24/7', 'secondary', 'SHEET', 'untagged in the research sheet');
export const none = (note: string): Fact<null> => fact(null, 'verified', 'CMESPEC', note);

/** Dotted paths of every fact under `node` whose status is `unverified`. */
function unverifiedPaths(node: unknown, path: string[] = []): string[] {
  if (node === null || typeof node !== 'object') return [];
  const record = node as Record<string, unknown>;
  if ('status' in record && 'value' in record) return record.status === 'unverified' ? [path.join('.')] : [];
  return Object.entries(record).flatMap(([key, child]) => unverifiedPaths(child, [...path, key]));
}

/** Adds the `unverified` index to a venue. */
export const venue = (details: Omit<VenueDetails, 'unverified'>): VenueDetails =>
  Object.freeze({ ...details, unverified: Object.freeze(unverifiedPaths(details)) });

/** Clamp-style perp funding (Binance, Bybit, OKX), 8 h, the common numbers. */
export const clampFunding = (
  source: string,
  status: FactStatus,
): Pick<VenueFunding, 'has_funding' | 'interest_basis_hours' | 'interest_rate' | 'dampener'> => ({
  has_funding: true,
  interest_basis_hours: 8,
  interest_rate: fact(0.0001, status, source, '0.03 %/day = 0.01 % per 8 h'),
  dampener: fact(0.0005, status, source),
});
