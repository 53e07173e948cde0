/**
 * Parameters of the synthetic market model. Field names are snake_case because they become the
 * generation manifest's fields; every field has a default and bounds. Fields whose default
 * depends on the symbol or the price (`initial_price`, `tick_size`, `lot_size`, `size_mean`,
 * `ou_long_run_price`) are optional in the input and always filled in the output, so a normalized
 * config is complete.
 *
 * Two schemas share these fields: `MarketModelConfig` (the live simulator: gbm | jump_diffusion)
 * and `GenerationModelConfig` (batch generation: adds the Ornstein–Uhlenbeck process `ou`). The
 * model functions accept either (`ModelConfig`). A contract (the manifest and the MCP tools are
 * derived from it); the simulator in producers/simulator/ runs it.
 */
import { z } from 'zod';
import { SymbolName } from './events.ts';

const DECIMAL = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/;

/** Number of decimals in the shortest representation of a positive number (0.25 → 2, 1e-7 → 7). */
export function decimalsOf(x: number): number {
  const match = DECIMAL.exec(String(x));
  if (!match) return Number.POSITIVE_INFINITY;
  const fraction = match[2]?.length ?? 0;
  const exponent = match[3] ? Number(match[3]) : 0;
  return Math.max(0, fraction - exponent);
}

/** Model time is generated in blocks of this length; block k depends only on (config, k). */
export const BLOCK_MS = 60_000;

/** 2026-01-01T00:00:00Z: output never depends on the wall clock. */
export const DEFAULT_START_TIME_MS = 1_767_225_600_000;

const DEFAULT_PRICES: Record<string, number> = { BTC: 65_000, ETH: 3_500, SOL: 150, HYPE: 25 };

/** Default initial price for a symbol, quote currency per unit. */
export function defaultInitialPrice(symbol: string): number {
  return DEFAULT_PRICES[symbol.toUpperCase()] ?? 100;
}

/** Largest power of ten not above x. */
const pow10Floor = (x: number): number => Number(`1e${Math.floor(Math.log10(x) + 1e-9)}`);

const unit = z.number().min(0).max(1);
const maxDecimals = (max: number) => (x: number) => decimalsOf(x) <= max;

/** Raw fields (JSON-Schema friendly); `MarketModelConfig` adds derived defaults. */
export const MarketModelConfigFields = z.object({
  symbol: SymbolName.default('BTC'),
  /** Quote currency per unit at model time 0; default by symbol (BTC 65000, ETH 3500, ...). */
  initial_price: z.number().positive().max(1e9).optional(),
  /** Annualised volatility of log price, fraction (0.6 = 60 %); 365-day year. */
  volatility_annual: z.number().min(0).max(5).default(0.6),
  /** Annual drift of the expected price, fraction per year. */
  drift: z.number().min(-10).max(10).default(0),
  price_process: z.enum(['gbm', 'jump_diffusion']).default('gbm'),
  /** Mean number of jumps per day (jump_diffusion only). */
  jump_intensity_per_day: z.number().min(0).max(100).default(4),
  /** Mean of the log jump size. */
  jump_mean: z.number().min(-0.5).max(0.5).default(0),
  /** Standard deviation of the log jump size. */
  jump_std: z.number().min(0).max(0.5).default(0.01),
  /** Price increment; default: the power of ten nearest below 0.1 bps of initial_price. */
  tick_size: z.number().min(1e-12).max(1e6).refine(maxDecimals(12), 'at most 12 decimals').optional(),
  /** Size increment, base units; default: the power of ten nearest below 10 USD. */
  lot_size: z.number().min(1e-12).max(1e6).refine(maxDecimals(12), 'at most 12 decimals').optional(),
  /** Levels per side in each book snapshot. */
  book_depth: z.number().int().min(1).max(100).default(10),
  /** Quoted spread at normal volatility, bps of mid; it widens with short-term volatility. */
  initial_spread_bps: z.number().min(0.01).max(1000).default(1),
  /** Book snapshot period, ms; must divide the block length (60000). */
  book_update_interval_ms: z
    .number()
    .int()
    .min(10)
    .max(BLOCK_MS)
    .refine((ms) => BLOCK_MS % ms === 0, `must divide ${BLOCK_MS}`)
    .default(100),
  /** Long-run mean trades per second (calm and burst regimes together). */
  trade_intensity: z.number().min(0).max(1000).default(5),
  /** Probability per second of entering the burst regime from calm. */
  burst_enter_prob: unit.default(0.01),
  /** Probability per second of leaving the burst regime (mean burst ≈ 1/p seconds). */
  burst_exit_prob: z.number().min(0.001).max(1).default(0.2),
  /** Trade intensity in a burst ÷ intensity when calm. */
  burst_multiplier: z.number().min(1).max(50).default(5),
  /** How much the aggressor side leans with the price move: P(buy) ∈ 0.5 ± side_lean. */
  side_lean: z.number().min(0).max(0.5).default(0.2),
  /** Mean trade size, base units; default: 2000 USD at initial_price. */
  size_mean: z.number().positive().max(1e9).optional(),
  /** Tail index of the Lomax (Pareto II) trade sizes: smaller is heavier; above 1 for a mean. */
  size_tail_alpha: z.number().min(1.1).max(10).default(2.5),
  /** Fixed part of capture latency, ms. */
  latency_base_ms: z.number().int().min(0).max(60_000).default(5),
  /** Mean of the exponential, non-negative latency jitter, ms. */
  latency_jitter_ms: z.number().min(0).max(60_000).default(2),
  /** Unix ms of model time 0. */
  start_time_ms: z.number().int().min(0).max(8_640_000_000_000).default(DEFAULT_START_TIME_MS),
  seed: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(42),
});

/** Raw fields as parsed, before the derived defaults are filled in (any price process). */
type RawFields = Omit<z.output<typeof MarketModelConfigFields>, 'price_process'>;

/** The fields whose defaults depend on the symbol or the price. */
type DerivedFields = { initial_price: number; tick_size: number; lot_size: number; size_mean: number };

/**
 * Fills the derived defaults of parsed raw fields and checks the price against the tick grid
 * (a zod transform: issues go to `ctx`). Shared by every schema that extends the fields.
 */
export function completeModelConfig<T extends RawFields>(
  raw: T,
  ctx: z.core.$RefinementCtx<T>,
): Omit<T, keyof DerivedFields> & DerivedFields {
  const initial_price = raw.initial_price ?? defaultInitialPrice(raw.symbol);
  const tick_size = raw.tick_size ?? pow10Floor(initial_price * 1e-5);
  const lot_size = raw.lot_size ?? pow10Floor(10 / initial_price);
  const size_mean = raw.size_mean ?? Math.max(lot_size, 2000 / initial_price);
  if (initial_price / tick_size < 10 || initial_price / tick_size > 1e12) {
    ctx.issues.push({
      code: 'custom',
      input: tick_size,
      path: ['tick_size'],
      message: 'initial_price must be between 10 and 1e12 ticks',
    });
  }
  return { ...raw, initial_price, tick_size, lot_size, size_mean };
}

/** Parsed, complete model configuration of the live simulator (derived defaults filled in). */
export const MarketModelConfig = MarketModelConfigFields.transform(completeModelConfig);

export type MarketModelConfig = z.output<typeof MarketModelConfig>;
export type MarketModelConfigInput = z.input<typeof MarketModelConfig>;

/** Parses and completes a model configuration; throws a ZodError when out of bounds. */
export function parseMarketModelConfig(input: MarketModelConfigInput = {}): MarketModelConfig {
  return MarketModelConfig.parse(input);
}

/** Every price process; `ou` is offered by batch generation only (see `GenerationModelConfig`). */
export const PRICE_PROCESSES = ['gbm', 'jump_diffusion', 'ou'] as const;

/**
 * Batch generation's fields: the live fields plus the Ornstein–Uhlenbeck log-price process
 * dX = κ(ln L − X)dt + σ dW (`ou`). Under `ou`, `drift` and the jump fields are unused.
 */
export const GenerationModelConfigFields = MarketModelConfigFields.extend({
  price_process: z.enum(PRICE_PROCESSES).default('gbm'),
  /** Mean-reversion speed κ of the log price (ou only), per year: a deviation halves in ln 2 / κ years. */
  ou_mean_reversion: z.number().min(0).max(100_000).default(365),
  /** Long-run price L that the log price reverts to (ou only); default: initial_price. */
  ou_long_run_price: z.number().positive().max(1e9).optional(),
});

type RawGenerationFields = Omit<z.output<typeof GenerationModelConfigFields>, 'price_process'>;

/** `completeModelConfig` plus the OU level's default (the initial price). */
export function completeGenerationConfig<T extends RawGenerationFields>(
  raw: T,
  ctx: z.core.$RefinementCtx<T>,
): Omit<T, keyof DerivedFields> & DerivedFields & { ou_long_run_price: number } {
  const complete = completeModelConfig(raw, ctx);
  return { ...complete, ou_long_run_price: raw.ou_long_run_price ?? complete.initial_price };
}

/** Complete configuration of batch generation (every process, derived defaults filled in). */
export const GenerationModelConfig = GenerationModelConfigFields.transform(completeGenerationConfig);

export type GenerationModelConfig = z.output<typeof GenerationModelConfig>;
export type GenerationModelConfigInput = z.input<typeof GenerationModelConfig>;

/** What the model functions accept: a live or a generation configuration. */
export type ModelConfig = MarketModelConfig | GenerationModelConfig;

/** Parses and completes a generation configuration; throws a ZodError when out of bounds. */
export function parseGenerationModelConfig(input: GenerationModelConfigInput = {}): GenerationModelConfig {
  return GenerationModelConfig.parse(input);
}
