/**
 * From tool arguments to manifests, pure. validate_config and generate_dataset build the same
 * `{config, duration_seconds}` with the same default duration, which is why validate_config's
 * `hash` equals generation's `manifest_hash` for the same config and duration.
 */
import type { z } from 'zod';
import { type ManifestValidation, validateManifest } from '../../../contracts/manifest.ts';
import {
  DEFAULT_DATASET_DURATION_SECONDS,
  type GENERATE_DATASET,
  type VALIDATE_CONFIG,
} from '../../../contracts/mcp-tools.ts';
import { findPreset } from '../../../contracts/presets.ts';

export type ValidateConfigArgs = z.output<typeof VALIDATE_CONFIG.input>;
export type GenerateDatasetArgs = z.output<typeof GENERATE_DATASET.input>;

/** The spec's generation request body (`POST /data/generate`), before validation. */
export type GenerationRequestBody = { config: Record<string, unknown>; duration_seconds: number };

export type ConfigValidation = ManifestValidation & {
  /** The duration the hash covers, seconds (as given, or the default). */
  duration_seconds: unknown;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The manifest validate_config checks: `{config, duration_seconds}`, or `config` itself when it is
 * a complete manifest (it has a `config` object), its own duration first.
 */
export function manifestToValidate(args: ValidateConfigArgs): Record<string, unknown> {
  const { config, duration_seconds } = args;
  if (isObject(config.config))
    return {
      ...config,
      duration_seconds: config.duration_seconds ?? duration_seconds ?? DEFAULT_DATASET_DURATION_SECONDS,
    };
  return { config, duration_seconds: duration_seconds ?? DEFAULT_DATASET_DURATION_SECONDS };
}

/** validate_config's result: validity, hash, normalized config and field errors, plus the duration. */
export function validateConfig(args: ValidateConfigArgs): ConfigValidation {
  const manifest = manifestToValidate(args);
  return { ...validateManifest(manifest), duration_seconds: manifest.duration_seconds };
}

/** generate_dataset's request body: preset < config < flat arguments, field by field. */
export function datasetRequest(args: GenerateDatasetArgs): GenerationRequestBody {
  const preset = args.preset === undefined ? undefined : findPreset(args.preset);
  const { symbol, seed, tick_size, lot_size } = args;
  const flat = Object.fromEntries(
    Object.entries({ symbol, seed, tick_size, lot_size }).filter(([, v]) => v !== undefined),
  );
  return {
    config: { ...preset?.manifest.config, ...args.config, ...flat },
    duration_seconds:
      args.duration_seconds ?? preset?.manifest.duration_seconds ?? DEFAULT_DATASET_DURATION_SECONDS,
  };
}
