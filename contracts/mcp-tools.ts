/**
 * The MCP tool registry as data: each tool's name, description and zod input schema. The JSON
 * Schema every listing shows (`tools/list`, `/mcp/tools/list`, `/mcp/manifest`,
 * `/.well-known/mcp.json`) is derived from these with `z.toJSONSchema`, never restated.
 * Handlers live in `gateways/http/mcp/`; adding a tool = one spec here + one handler there.
 * Pure: no I/O.
 */
import { z } from 'zod';
import { SymbolName } from './events.ts';
import { SimulationManifest } from './manifest.ts';
import { GenerationModelConfigFields } from './model-config.ts';
import { PRESET_NAMES } from './presets.ts';

/** Version of the simulation/MCP service (spec "Versioning" §1). */
export const SERVICE_VERSION = '0.4.7';
/** MCP protocol version string (spec "Versioning" §2). */
export const MCP_PROTOCOL_VERSION = '2024-11-05';
/** `serverInfo` of the initialize result. */
export const SERVER_INFO = Object.freeze({ name: 'market-data-simulation', version: SERVICE_VERSION });
export const SERVER_DESCRIPTION =
  'Deterministic market simulation: synthetic trade and L2 book datasets as Parquet, manifest validation with a deterministic hash, presets, and health.';

/**
 * Dataset length when a caller gives none, seconds: generate_dataset's default, and the duration
 * validate_config hashes with when none is given, so that both report the same manifest hash.
 */
export const DEFAULT_DATASET_DURATION_SECONDS = 60;

/** One tool: what `tools/list` shows, plus the zod schema its arguments are parsed with. */
export type McpToolSpec<S extends z.ZodType = z.ZodType> = {
  readonly name: string;
  readonly description: string;
  /** An object schema; unknown arguments are rejected. */
  readonly input: S;
};

/** A tool as listed: `inputSchema` is the JSON Schema of `input` (always `"type": "object"`). */
export type McpToolListing = {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
};

const noArguments = z.object({}).strict();
const fields = GenerationModelConfigFields.shape;
const looseConfig = z.record(z.string(), z.unknown());

export const GET_HEALTH = {
  name: 'get_health',
  description: 'Service health: status (ok or degraded), version, and NATS connectivity.',
  input: noArguments,
} as const satisfies McpToolSpec;

export const GET_PRESETS = {
  name: 'get_presets',
  description:
    'List named market scenarios (name, venue, instrument type, description and the complete generation manifest). Pass a name as the `preset` argument of generate_dataset.',
  input: noArguments,
} as const satisfies McpToolSpec;

export const GET_CONFIG_SCHEMA = {
  name: 'get_config_schema',
  description:
    'The JSON Schema of the SimulationManifest ({config, duration_seconds, driver}) that generation takes: every config field with its default and bounds.',
  input: noArguments,
} as const satisfies McpToolSpec;

export const VALIDATE_CONFIG = {
  name: 'validate_config',
  description: `Validate a simulation config without running it and compute its deterministic manifest hash: sha256 of the RFC 8785 canonical JSON of the normalized {config, duration_seconds}. The hash equals generate_dataset's manifest_hash for the same config and duration_seconds (default ${DEFAULT_DATASET_DURATION_SECONDS}). A complete manifest ({config, duration_seconds, driver}) is also accepted as \`config\`. Returns {valid, hash, config (normalized, defaults filled), duration_seconds, errors: [{field, reason}]}.`,
  input: z
    .object({
      config: looseConfig.describe(
        'The manifest config: symbol (required), seed, initial_price, volatility_annual, tick_size, lot_size, … (see get_config_schema, property "config").',
      ),
      duration_seconds: SimulationManifest.shape.duration_seconds
        .optional()
        .describe(`Seconds of data the hash covers; default ${DEFAULT_DATASET_DURATION_SECONDS}.`),
    })
    .strict(),
} as const satisfies McpToolSpec;

export const GENERATE_DATASET = {
  name: 'generate_dataset',
  description: `Generate a deterministic synthetic dataset (trades and L2 book snapshots) as a Parquet artifact and wait for it. Start from a \`preset\` and/or a full \`config\`; the flat arguments override both (preset < config < flat arguments). symbol is required from one of them. Returns {status, download_url, row_count, storage_backend, content_length_bytes, job_id, manifest_hash}.`,
  input: z
    .object({
      symbol: SymbolName.optional().describe('Base symbol, e.g. BTC.'),
      duration_seconds: SimulationManifest.shape.duration_seconds
        .optional()
        .describe(
          `Seconds of data; default: the preset's, else ${DEFAULT_DATASET_DURATION_SECONDS}. At most 604800.`,
        ),
      seed: fields.seed.unwrap().optional().describe('Seed for reproducibility; default 42.'),
      tick_size: fields.tick_size.describe('Price increment; default derived from the initial price.'),
      lot_size: fields.lot_size.describe('Size increment, base units; default derived from the price.'),
      preset: z.enum(PRESET_NAMES).optional().describe('A preset name from get_presets.'),
      config: looseConfig.optional().describe('A full manifest config (see get_config_schema).'),
    })
    .strict(),
} as const satisfies McpToolSpec;

/** The tools of this issue, in listing order. */
export const CORE_TOOL_SPECS = [
  GET_HEALTH,
  GET_PRESETS,
  GET_CONFIG_SCHEMA,
  VALIDATE_CONFIG,
  GENERATE_DATASET,
] as const satisfies readonly McpToolSpec[];

/** The listing of one tool; throws if its input schema is not an object schema. */
export function toolListing(spec: McpToolSpec): McpToolListing {
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(spec.input, { io: 'input' }) as Record<
    string,
    unknown
  >;
  if (inputSchema.type !== 'object') throw new TypeError(`tool ${spec.name}: input must be an object schema`);
  return { name: spec.name, description: spec.description, inputSchema: inputSchema as { type: 'object' } };
}

/**
 * The MCP session configuration (`/.well-known/mcp-config`): what a registry asks the user for
 * when it installs the server. The key travels in the `x-api-key` header of every request.
 */
export const McpSessionConfig = z
  .object({
    apiKey: z
      .string()
      .min(1)
      .meta({
        title: 'API key',
        description: 'Your API key (console: create key). Sent as the X-API-Key header.',
        'x-from': { header: 'x-api-key' },
      }),
  })
  .strict();

/** JSON Schema of the session configuration, derived from `McpSessionConfig`. */
export function mcpSessionConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(McpSessionConfig, { io: 'input' }) as Record<string, unknown>;
}
