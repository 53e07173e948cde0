/**
 * Counter-based pseudo-random numbers: every draw is a pure hash of (seed, stream, index), so a
 * draw never depends on how many draws came before it. This is what lets any block of the market
 * model be computed alone, in any order, on any worker, with identical output.
 *
 * Mixer: lowbias32 (Chris Wellons' hash-prospector), a Math.imul avalanche bijection on 32 bits.
 * A 53-bit double combines two independent 32-bit lanes. Seeds and indices are integers up to
 * 2^53, folded into low/high 32-bit words. Math.log/cos are fdlibm ports in V8, so results are
 * bit-identical across machines running the same Node major.
 */

const TWO32 = 4294967296;
const TWO53 = 9007199254740992;
const TAU = 2 * Math.PI;

/** Stream ids: one per kind of draw, so that two kinds never share a counter. */
export const STREAM = {
  PRICE: 1,
  JUMP_COUNT: 2,
  JUMP_SIZE: 3,
  JUMP_TIME: 4,
  BRIDGE: 5,
  BOOK: 6,
  REGIME: 7,
  TRADE_COUNT: 8,
  TRADE_TIME: 9,
  SIDE: 10,
  SIZE: 11,
  LATENCY: 12,
} as const;
export type StreamId = (typeof STREAM)[keyof typeof STREAM];

/** lowbias32: 32-bit avalanche bijection (bias ≈ 0.17). Returns an unsigned 32-bit integer. */
export function mix32(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Absorbs one 32-bit word into a running hash. */
function absorb(h: number, word: number): number {
  return mix32(((h ^ word) + 0x9e3779b9) | 0);
}

const lo32 = (n: number): number => n >>> 0;
const hi32 = (n: number): number => Math.floor(n / TWO32) >>> 0;
/** hi32 with a fast path for the usual counters below 2^32. */
const highWord = (n: number): number => (n >= 0 && n < TWO32 ? 0 : hi32(n));

// Lanes 0-1 make `uniform`, lanes 2-5 make `normal` (two uniforms), so they share no bits.
const LANE_SALT = [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0];

/**
 * Pre-hashed keys of one (seed, stream): on the hot path a 32-bit word costs two mixes.
 * `uniform(seed, stream, i) === new RandomStream(seed, stream).uniform(i)` always. Use each
 * counter for one draw: `uniform` and `fraction` share lane 0, `normal` has lanes of its own.
 */
export class RandomStream {
  // Lane keys (a: xored into the index's low word, b: added to its high word), lanes 0-5.
  private readonly a0: number;
  private readonly b0: number;
  private readonly a1: number;
  private readonly b1: number;
  private readonly a2: number;
  private readonly b2: number;
  private readonly a3: number;
  private readonly b3: number;
  private readonly a4: number;
  private readonly b4: number;
  private readonly a5: number;
  private readonly b5: number;

  constructor(seed: number, stream: number) {
    const sLo = lo32(seed);
    const sHi = hi32(seed);
    const key = (lane: number): number => absorb(absorb(absorb(LANE_SALT[lane] as number, sLo), sHi), stream);
    const partner = (a: number): number => absorb(a, 0x7f4a7c15) | 0;
    this.a0 = key(0) | 0;
    this.b0 = partner(this.a0);
    this.a1 = key(1) | 0;
    this.b1 = partner(this.a1);
    this.a2 = key(2) | 0;
    this.b2 = partner(this.a2);
    this.a3 = key(3) | 0;
    this.b3 = partner(this.a3);
    this.a4 = key(4) | 0;
    this.b4 = partner(this.a4);
    this.a5 = key(5) | 0;
    this.b5 = partner(this.a5);
  }

  /** Uniform in [0, 1) with 53 random bits. */
  uniform(index: number): number {
    const lo = index >>> 0;
    const hi = highWord(index);
    const a = mix32(mix32(lo ^ this.a0) ^ (hi + this.b0)) >>> 11;
    return (a * TWO32 + mix32(mix32(lo ^ this.a1) ^ (hi + this.b1))) / TWO53;
  }

  /** Uniform in [0, 1) with 32 random bits: half the cost, for draws that need no more. */
  fraction(index: number): number {
    const hi = highWord(index);
    return mix32(mix32((index >>> 0) ^ this.a0) ^ (hi + this.b0)) / TWO32;
  }

  /**
   * `fraction(first + j)` into `out[j]` for j < count: the same values, with the per-call
   * high-word work done once when the whole range is below 2^32 (a book's size noise).
   */
  fractions(first: number, count: number, out: Float64Array): void {
    if (!(first >= 0 && first + count <= TWO32)) {
      for (let j = 0; j < count; j++) out[j] = this.fraction(first + j);
      return;
    }
    const a = this.a0;
    const b = this.b0; // hi is 0: hi + b0 === b0
    for (let j = 0; j < count; j++) out[j] = mix32(mix32(((first + j) >>> 0) ^ a) ^ b) / TWO32;
  }

  /** Standard normal (Box–Muller on two uniforms of this counter, lanes 2-5). */
  normal(index: number): number {
    const lo = index >>> 0;
    const hi = highWord(index);
    const a = mix32(mix32(lo ^ this.a2) ^ (hi + this.b2)) >>> 11;
    const u1 = (a * TWO32 + mix32(mix32(lo ^ this.a3) ^ (hi + this.b3))) / TWO53;
    const c = mix32(mix32(lo ^ this.a4) ^ (hi + this.b4)) >>> 11;
    const u2 = (c * TWO32 + mix32(mix32(lo ^ this.a5) ^ (hi + this.b5))) / TWO53;
    return Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(TAU * u2);
  }
}

/** Uniform in [0, 1) for counter `index` of `stream` under `seed`; independent of call order. */
export function uniform(seed: number, stream: number, index: number): number {
  return new RandomStream(seed, stream).uniform(index);
}

/** Standard normal for counter `index` of `stream` under `seed`. */
export function normal(seed: number, stream: number, index: number): number {
  return new RandomStream(seed, stream).normal(index);
}

/** Above this mean, `poisson` uses the normal approximation (inversion would lose precision). */
export const POISSON_INVERSION_MAX_MEAN = 30;

/**
 * Poisson variate from uniforms: inversion of the CDF with `u1` for small means, otherwise the
 * normal approximation N(mean, mean) from Box–Muller on (u1, u2), rounded and floored at 0.
 */
export function poisson(mean: number, u1: number, u2: number): number {
  if (!(mean > 0)) return 0;
  if (mean > POISSON_INVERSION_MAX_MEAN) {
    const z = Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(TAU * u2);
    return Math.max(0, Math.floor(mean + Math.sqrt(mean) * z + 0.5));
  }
  let p = Math.exp(-mean);
  let cdf = p;
  let k = 0;
  // The cap guards against a CDF that rounds to just below u1 near 1.
  const cap = Math.ceil(mean + 12 * Math.sqrt(mean) + 12);
  while (u1 >= cdf && k < cap) {
    k++;
    p *= mean / k;
    cdf += p;
  }
  return k;
}

/** Derives an independent integer seed in [0, 2^53) from a seed and integer keys. */
export function deriveSeed(seed: number, ...keys: number[]): number {
  let a = absorb(absorb(0x6a09e667, lo32(seed)), hi32(seed));
  for (const key of keys) a = absorb(absorb(a, lo32(key)), hi32(key));
  const b = absorb(a, 0x3c6ef372);
  return (a >>> 11) * TWO32 + b;
}

/** 32-bit hash of a string (FNV-1a then lowbias32), to key seeds by symbol. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix32(h);
}
