/**
 * What a command is (name, help, options, run) and how its command line is parsed: node:util
 * parseArgs, strict, with the options every command shares (`--help`, `--json`, `--url`,
 * `--stream-url`).
 */
import { parseArgs } from 'node:util';
import { parsePosition, type ResumePosition } from '@mdp/client';
import { type Endpoints, endpoints } from './config.ts';
import { UsageError } from './exit-codes.ts';
import type { Term } from './term.ts';

export type OptionSpec = {
  type: 'string' | 'boolean';
  short?: string;
  /** Placeholder of the value in help, e.g. `SEQ`. */
  value?: string;
  description: string;
  multiple?: boolean;
};

export type Values = Record<string, string | boolean | string[] | undefined>;

export type Ctx = {
  term: Term;
  env: NodeJS.ProcessEnv;
  /** Aborted by Ctrl-C or SIGTERM: commands stop cleanly and return `stopCode()`. */
  signal: AbortSignal;
  /** 130 after SIGINT, 143 after SIGTERM. */
  stopCode(): number;
  endpoints: Endpoints;
  json: boolean;
  /** Reads stdin whole (password, files given as `-`). */
  stdin: NodeJS.ReadableStream;
};

export type Command = {
  /** e.g. `['cache', 'ls']`. */
  path: string[];
  summary: string;
  /** Arguments after the command and options, e.g. `FILE…`. */
  args?: string;
  /** Allowed positional count. */
  positionals?: { min: number; max?: number };
  options: Record<string, OptionSpec>;
  /** Extra help text (examples). */
  details?: string;
  run(ctx: Ctx, values: Values, positionals: string[]): Promise<number>;
};

export const COMMON_OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean', description: 'machine-readable output (JSON)' },
  url: {
    type: 'string',
    value: 'URL',
    description: '{base_url} (default $MDP_URL, config, http://127.0.0.1:8080)',
  },
  'stream-url': {
    type: 'string',
    value: 'URL',
    description: 'unified stream edge (default $MDP_STREAM_URL, config, http://127.0.0.1:8081)',
  },
  'disk-url': {
    type: 'string',
    value: 'URL',
    description: 'disk-sync edge, for sync (default $MDP_DISK_URL, config, ws://127.0.0.1:8082)',
  },
  help: { type: 'boolean', short: 'h', description: 'show this help' },
};

export function parseCommandLine(cmd: Command, argv: string[]): { values: Values; positionals: string[] } {
  const options = { ...cmd.options, ...COMMON_OPTIONS };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [
          name,
          { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
        ]),
      ),
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values, positionals } = parsed as { values: Values; positionals: string[] };
  if (values.help) return { values, positionals };
  const { min, max } = cmd.positionals ?? { min: 0, max: 0 };
  if (positionals.length < min) throw new UsageError(`missing argument: ${cmd.args ?? ''}`.trim());
  if (max !== undefined && positionals.length > max)
    throw new UsageError(`unexpected argument: ${positionals[max]}`);
  return { values, positionals };
}

export function commandHelp(cmd: Command): string {
  const options = { ...cmd.options, ...COMMON_OPTIONS };
  const lines = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : '    '}--${name}${o.value ? ` ${o.value}` : ''}`;
    return `  ${flag.padEnd(30)} ${o.description}`;
  });
  const usage = `mdp ${cmd.path.join(' ')} [options]${cmd.args ? ` ${cmd.args}` : ''}`;
  return `Usage: ${usage}\n\n${cmd.summary}\n\nOptions:\n${lines.join('\n')}\n${cmd.details ? `\n${cmd.details}\n` : ''}`;
}

/** A required string option; exit 2 naming it when absent. */
export function required(values: Values, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

/** A non-negative integer option, or undefined. */
export function integer(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || !Number.isSafeInteger(Number(v)))
    throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

/**
 * A resume position option, or undefined: `N` (a platform sequence) or `N:K` (with the last own
 * sequence, as `stream` and `sync` print it once the account's own events came).
 */
export function position(values: Values, name: string): ResumePosition | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  try {
    if (typeof v !== 'string') throw new Error('not text');
    return parsePosition(v);
  } catch {
    throw new UsageError(`--${name} must be a sequence N or N:K, got ${JSON.stringify(v)}`);
  }
}

/** A positive number option (fractions allowed), or undefined. */
export function positive(values: Values, name: string): number | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d*\.?\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!(n > 0)) throw new UsageError(`--${name} must be a positive number, got ${JSON.stringify(v)}`);
  return n;
}

/** A comma list option (`--coin BTC,ETH`, repeatable), or undefined. */
export function list(values: Values, name: string): string[] | undefined {
  const v = values[name];
  if (v === undefined) return undefined;
  const items = (Array.isArray(v) ? v : [String(v)]).flatMap((s) => s.split(',')).map((s) => s.trim());
  const kept = items.filter(Boolean);
  if (kept.length === 0) throw new UsageError(`--${name} needs at least one value`);
  return kept;
}

export const resolveEndpoints = (values: Values, env: NodeJS.ProcessEnv): Endpoints =>
  endpoints(
    {
      url: values.url as string | undefined,
      'stream-url': values['stream-url'] as string | undefined,
      'disk-url': values['disk-url'] as string | undefined,
    },
    env,
  );
