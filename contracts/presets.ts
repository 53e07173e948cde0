/**
 * Named simulation presets: market scenarios a client can list (`get_presets`, `GET /mcp/presets`)
 * and run by name (`generate_dataset` with `preset`). Each carries a complete, valid generation
 * manifest (a unit test parses every one with `SimulationManifest`). Pure data.
 *
 * Tick and lot sizes follow the venue's real instrument for the symbol (VENUES.md §8); the model
 * parameters are chosen for the regime, not fitted to any venue's history.
 */
import type { SimulationManifestInput } from './manifest.ts';

/** Venues a preset can be styled after (the funding/venue tools' exchanges, plus our own feed). */
export const PRESET_VENUES = ['binance', 'hyperliquid', 'okx', 'bybit', 'cme', 'sgx', 'synthetic'] as const;
export type PresetVenue = (typeof PRESET_VENUES)[number];

/** Instrument type the preset imitates. */
export const INSTRUMENT_TYPES = ['perpetual', 'spot', 'dated_future'] as const;
export type InstrumentType = (typeof INSTRUMENT_TYPES)[number];

/** One named scenario. */
export type Preset = {
  /** kebab-case name, the `preset` argument of generate_dataset. */
  readonly name: string;
  readonly venue: PresetVenue;
  readonly type: InstrumentType;
  readonly description: string;
  /** The generation manifest the preset stands for (input form: defaults not filled in). */
  readonly manifest: SimulationManifestInput;
};

// biome-ignore format: one preset per block reads better unwrapped
const PRESET_LIST = [
  {
    name: 'calm',
    venue: 'binance',
    type: 'perpetual',
    description: 'Quiet BTCUSDT perpetual session: low volatility, tight spread, deep book, rare bursts of activity.',
    manifest: {
      config: {
        symbol: 'BTC', seed: 101, initial_price: 65_000, tick_size: 0.1, lot_size: 0.001,
        volatility_annual: 0.35, trade_intensity: 4, burst_enter_prob: 0.002, burst_multiplier: 2,
        initial_spread_bps: 0.5, book_depth: 20,
      },
      duration_seconds: 3600,
    },
  },
  {
    name: 'volatile',
    venue: 'hyperliquid',
    type: 'perpetual',
    description: 'Choppy ETH perpetual: high volatility with frequent small jumps, wide spread and frequent activity bursts.',
    manifest: {
      config: {
        symbol: 'ETH', seed: 202, initial_price: 3_500, tick_size: 0.1, lot_size: 0.0001,
        volatility_annual: 1.2, price_process: 'jump_diffusion', jump_intensity_per_day: 24, jump_std: 0.01,
        trade_intensity: 20, burst_enter_prob: 0.03, burst_multiplier: 8, initial_spread_bps: 3,
      },
      duration_seconds: 3600,
    },
  },
  {
    name: 'flash-crash',
    venue: 'binance',
    type: 'perpetual',
    description: 'BTCUSDT perpetual hit by sudden downward jumps (about two an hour, -4 % on average) with sell-side aggression bursts and a widening spread.',
    manifest: {
      config: {
        symbol: 'BTC', seed: 303, initial_price: 65_000, tick_size: 0.1, lot_size: 0.001,
        volatility_annual: 0.9, price_process: 'jump_diffusion', jump_intensity_per_day: 48, jump_mean: -0.04,
        jump_std: 0.02, trade_intensity: 15, burst_enter_prob: 0.05, burst_multiplier: 20, side_lean: 0.45,
        initial_spread_bps: 2,
      },
      duration_seconds: 1800,
    },
  },
  {
    name: 'funding-squeeze',
    venue: 'hyperliquid',
    type: 'perpetual',
    description: 'Crowded longs chasing SOL: strong upward drift with buy-side aggression over four hourly funding periods; pair it with simulate_funding_regime (mark above spot).',
    manifest: {
      config: {
        symbol: 'SOL', seed: 404, initial_price: 150, tick_size: 0.01, lot_size: 0.01,
        volatility_annual: 0.9, drift: 3, side_lean: 0.4, trade_intensity: 12, burst_enter_prob: 0.02,
        burst_multiplier: 6, initial_spread_bps: 1.5,
      },
      duration_seconds: 14_400,
    },
  },
  {
    name: 'range-bound',
    venue: 'okx',
    type: 'perpetual',
    description: 'BTC-USDT-SWAP trading sideways: an Ornstein-Uhlenbeck price pulled back to its starting level within hours.',
    manifest: {
      config: {
        symbol: 'BTC', seed: 505, initial_price: 65_000, tick_size: 0.1, lot_size: 0.01,
        volatility_annual: 0.5, price_process: 'ou', ou_mean_reversion: 2_000, trade_intensity: 6,
      },
      duration_seconds: 7200,
    },
  },
] as const satisfies readonly Preset[];

/** Every preset name, in listing order. */
export const PRESET_NAMES = PRESET_LIST.map((p) => p.name) as [PresetName, ...PresetName[]];
export type PresetName = (typeof PRESET_LIST)[number]['name'];

/** Every preset, in listing order. */
export const PRESETS: readonly Preset[] = PRESET_LIST;

/** The preset called `name`, or undefined. */
export function findPreset(name: string): Preset | undefined {
  return PRESETS.find((p) => p.name === name);
}
