/**
 * The funding-rate formulas every perpetual venue shares (VENUES.md §7), as pure functions of
 * fractions (0.0005 = 0.05 %). Venue files choose the parameters; nothing here knows a venue.
 */

/** `x` limited to [lo, hi]. */
export const clamp = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x));

/**
 * Premium + clamped interest: F = [P + clamp(I − P, −d, +d)] × scale, the rate for one period
 * before the cap. While |I − P| ≤ d the rate is pinned at I × scale (the dampener's flat band).
 * `scale` = interval hours / hours the formula is quoted over: 1 for an 8 h venue quoting per 8 h,
 * 1/8 for Hyperliquid's hourly payment of the 8-hour rate, N/8 for Binance's N-hour symbols.
 */
export function premiumInterestRate(
  premium: number,
  interest: number,
  dampener: number,
  scale: number,
): number {
  // P + clamp(I − P, −d, d) = clamp(I, P − d, P + d): the same rate, but inside the band it is I
  // bit for bit (P + (I − P) would round to 0.00009999999999999999 for I = 0.0001).
  return clamp(interest, premium - dampener, premium + dampener) * scale;
}

/**
 * The rate after the cap: a hard clamp to ±cap, or (soft) the smooth saturation cap · tanh(F / cap),
 * which has slope 1 at 0, is odd and increasing, and never reaches ±cap. In double precision tanh
 * rounds to ±1 once |F| ≳ 18.7 · cap, so the soft result is held one or two ulps inside the cap to
 * keep "strictly inside" true for every input (the saturated tail is flat either way).
 */
export function capRate(rate: number, cap: number, soft: boolean): number {
  if (!soft) return clamp(rate, -cap, cap);
  // cap · (1 − 2^−52) lies 1–2 ulps below cap, whatever cap is.
  const inside = cap * (1 - Number.EPSILON);
  return clamp(cap * Math.tanh(rate / cap), -inside, inside);
}
