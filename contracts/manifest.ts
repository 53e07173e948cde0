/**
 * The simulation manifest: the body of `POST /data/generate` and of manifest validation.
 *
 * `config` is the market model's own field set (`GenerationModelConfigFields` from the simulator,
 * extended, never restated): the spec's keys (symbol, initial_price, volatility_annual, seed) plus
 * the model's (start_time_ms, tick_size, lot_size, spreads, depth, intervals, intensities, drift,
 * price process and its parameters, capture latency). Every field has a default and bounds;
 * unknown fields are rejected at every level.
 *
 * The hash covers exactly what determines the output: the complete normalized config and
 * `duration_seconds`, as RFC 8785 canonical JSON. `driver` only tunes execution (workers,
 * windows, retries) and never changes a byte of the rows, so it is not hashed.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { z } from 'zod';
import { SymbolName } from './events.ts';
import {
  BLOCK_MS,
  completeGenerationConfig,
  type GenerationModelConfig,
  GenerationModelConfigFields,
} from './model-config.ts';

/** Longest dataset, seconds (7 days). */
export const MAX_DURATION_SECONDS = 604_800;

/** Model config as the manifest takes it: `symbol` is required (the spec's only required key). */
const ManifestConfigFields = GenerationModelConfigFields.extend({ symbol: SymbolName }).strict();

/** The manifest's `config`, completed: derived defaults (price, tick, lot, size, OU level) filled. */
export const ManifestConfig = ManifestConfigFields.transform(completeGenerationConfig);

const blockSeconds = BLOCK_MS / 1000;

/** Execution tuning: never part of the hash, never changes the rows. */
export const GenerationDriver = z
  .object({
    /** Run windows on `workers` worker threads; false runs them one by one in-process. */
    multiprocess: z.boolean().default(false),
    /** Worker threads when `multiprocess` is true (ignored otherwise). */
    workers: z.number().int().min(1).max(16).default(1),
    /** Model time per window (one part file, one unit of retry), seconds; a multiple of 60. */
    window_seconds: z
      .number()
      .min(60)
      .max(86_400)
      .refine((s) => Number.isInteger(s / blockSeconds), `must be a multiple of ${blockSeconds}`)
      .default(3600),
    /** Retries of a failing window before the job fails. */
    max_retries: z.number().int().min(0).max(10).default(2),
    /** Wait before the first retry, seconds; doubles on each further retry (capped at 60 s). */
    backoff_seconds: z.number().min(0).max(60).default(0.5),
  })
  .strict();
export type GenerationDriver = z.output<typeof GenerationDriver>;

/** A generation request. Parsing fills every default, so the output is the normalized manifest. */
export const SimulationManifest = z
  .object({
    config: ManifestConfig,
    /** Seconds of model time to generate, from `config.start_time_ms`. */
    duration_seconds: z.number().int().min(1).max(MAX_DURATION_SECONDS),
    driver: GenerationDriver.default(() => GenerationDriver.parse({})),
  })
  .strict();
export type SimulationManifest = z.output<typeof SimulationManifest>;
export type SimulationManifestInput = z.input<typeof SimulationManifest>;

/** A parsed manifest: defaults filled everywhere, and its complete model config. */
export type NormalizedManifest = { manifest: SimulationManifest; config: GenerationModelConfig };

/** Parses and normalizes a manifest; throws a ZodError (with field paths) when it is invalid. */
export function normalizeManifest(input: unknown): NormalizedManifest {
  const manifest = SimulationManifest.parse(input);
  return { manifest, config: manifest.config };
}

/**
 * `sha256:<hex>` of the RFC 8785 canonical JSON of `{ config, duration_seconds }` of a normalized
 * manifest: equal for manifests that differ only in key order, whitespace or explicit defaults.
 */
export function manifestHash(normalized: NormalizedManifest | SimulationManifest): string {
  const manifest = 'manifest' in normalized ? normalized.manifest : normalized;
  const text = canonicalize({ config: manifest.config, duration_seconds: manifest.duration_seconds });
  if (text === undefined) throw new TypeError('manifest is not canonicalizable');
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** JSON Schema of the manifest input (what clients send), derived from the zod schema. */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(SimulationManifest, { io: 'input' }) as Record<string, unknown>;
}

/** One field-level diagnostic: a dotted path (`config.book_depth`) and a reason. */
export type ManifestFieldError = { field: string; reason: string };

/** Outcome of validating a manifest without running it. */
export type ManifestValidation = {
  valid: boolean;
  /** `sha256:<hex>` when valid, else null. */
  hash: string | null;
  /** The complete normalized config when valid, else null. */
  config: GenerationModelConfig | null;
  errors: ManifestFieldError[];
};

const dotted = (path: readonly PropertyKey[]): string => path.map(String).join('.');

/** Field-level errors of a ZodError; an unknown key is reported at its own path. */
export function manifestFieldErrors(error: z.ZodError): ManifestFieldError[] {
  return error.issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ field: dotted([...issue.path, key]), reason: 'unknown field' }))
      : [{ field: dotted(issue.path) || '(root)', reason: issue.message }],
  );
}

/** Validates a manifest: its hash and complete config, or field-level errors. */
export function validateManifest(input: unknown): ManifestValidation {
  const parsed = SimulationManifest.safeParse(input);
  if (!parsed.success)
    return { valid: false, hash: null, config: null, errors: manifestFieldErrors(parsed.error) };
  return { valid: true, hash: manifestHash(parsed.data), config: parsed.data.config, errors: [] };
}
