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
import { BINANCE } from './venues/binance.ts';
import { BYBIT } from './venues/bybit.ts';
import { CME } from './venues/cme.ts';
import { Exchange, type VenueDetails } from './venues/facts.ts';
import { HYPERLIQUID } from './venues/hyperliquid.ts';
import { OKX } from './venues/okx.ts';
import { SGX } from './venues/sgx.ts';

export * from './venues/facts.ts';

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
