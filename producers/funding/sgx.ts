/**
 * SGX BTC/ETH perpetual futures (launched 24 Nov 2025). The funding formula and interval are not
 * public; this is the generic premium + clamped interest inside SGX's published ±0.35 % cap.
 * https://quickfeed.io/article/sgx-derivatives-to-launch-bitcoin-and-ether-perpetual-futures-referencing-iedge-coindesk-crypto-indices
 */
import { VENUE_DETAILS } from '../../contracts/venues.ts';
import { perpetualModel } from './perpetual.ts';

export const sgxFunding = perpetualModel(VENUE_DETAILS.sgx, [
  'SGX: funding formula and interval are not public. Modelled as one daily funding (24 h) of F = P + clamp(I − P, ±0.05 %) with I = 3 bp per day (the "stabilising range" average), capped at the published ±0.35 %.',
  // The request's position is in base units; SGX positions are contracts of 0.2 BTC / 5 ETH.
  'position_size is in base units: 1 BTC = 5 SGX contracts of 0.2 BTC (1 ETH = 0.2 contracts of 5 ETH); payment = −size × mark × rate.',
]);
