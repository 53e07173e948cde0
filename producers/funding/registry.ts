/** Funding models by exchange: adding a venue = one model file + one line here. */
import type { Exchange } from '../../contracts/venues.ts';
import { binanceFunding } from './binance.ts';
import { bybitFunding } from './bybit.ts';
import { cmeFunding } from './cme.ts';
import { hyperliquidFunding } from './hyperliquid.ts';
import type { FundingVenueModel } from './model.ts';
import { okxFunding } from './okx.ts';
import { sgxFunding } from './sgx.ts';

/** Every venue's funding model. */
export const FUNDING_MODELS: Readonly<Record<Exchange, FundingVenueModel>> = Object.freeze({
  binance: binanceFunding,
  hyperliquid: hyperliquidFunding,
  okx: okxFunding,
  bybit: bybitFunding,
  cme: cmeFunding,
  sgx: sgxFunding,
});

/** The funding model of `exchange`. */
export function fundingModel(exchange: Exchange): FundingVenueModel {
  return FUNDING_MODELS[exchange];
}
