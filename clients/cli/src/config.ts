/**
 * The user's configuration file (`$MDP_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mdp`, else
 * `~/.config/mdp`; `config.json`, mode 0600 in a 0700 directory): URLs, an API key and the console
 * session. The key comes from `MDP_API_KEY` first, then this file; it is never printed.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './exit-codes.ts';

export type StoredConfig = {
  url?: string;
  stream_url?: string;
  disk_url?: string;
  /** The JSON-RPC edge (`mdp bars`). */
  rpc_url?: string;
  api_key?: string;
  session?: { token: string; expires_at: string | number; email: string };
};

export const DEFAULT_URL = 'http://127.0.0.1:8080';
export const DEFAULT_STREAM_URL = 'http://127.0.0.1:8081';
export const DEFAULT_DISK_URL = 'ws://127.0.0.1:8082';
export const DEFAULT_RPC_URL = 'http://127.0.0.1:8545';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MDP_CONFIG_DIR) return env.MDP_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'mdp');
}

export const configFile = (env: NodeJS.ProcessEnv = process.env): string =>
  join(configDir(env), 'config.json');

export function readConfig(env: NodeJS.ProcessEnv = process.env): StoredConfig {
  try {
    return JSON.parse(readFileSync(configFile(env), 'utf8')) as StoredConfig;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${configFile(env)}: ${(err as Error).message}`, EXIT.failure);
  }
}

/** Merges `patch` into the file, written whole (temporary file + rename), mode 0600. */
export function updateConfig(
  patch: Partial<StoredConfig>,
  env: NodeJS.ProcessEnv = process.env,
): StoredConfig {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const next = { ...readConfig(env), ...patch };
  for (const [k, v] of Object.entries(next)) if (v === undefined) delete next[k as keyof StoredConfig];
  const file = configFile(env);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return next;
}

export type Endpoints = { url: string; streamUrl: string; diskUrl: string };

export function endpoints(
  flags: { url?: string | undefined; 'stream-url'?: string | undefined; 'disk-url'?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Endpoints {
  const stored = readConfig(env);
  return {
    url: flags.url ?? env.MDP_URL ?? stored.url ?? DEFAULT_URL,
    streamUrl: flags['stream-url'] ?? env.MDP_STREAM_URL ?? stored.stream_url ?? DEFAULT_STREAM_URL,
    diskUrl: flags['disk-url'] ?? env.MDP_DISK_URL ?? stored.disk_url ?? DEFAULT_DISK_URL,
  };
}

/** The JSON-RPC edge: `--rpc-url`, else `$MDP_RPC_URL`, else the config file's `rpc_url`, else local. */
export function rpcUrl(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? (env.MDP_RPC_URL || readConfig(env).rpc_url || DEFAULT_RPC_URL);
}

/** The API key (`MDP_API_KEY`, else the config file); exit 3 when there is none. */
export function apiKey(env: NodeJS.ProcessEnv = process.env): string {
  const key = env.MDP_API_KEY || readConfig(env).api_key;
  if (!key)
    throw new CliError(
      'no API key: set MDP_API_KEY or run `mdp keys create --name NAME --save` after `mdp login`',
      EXIT.auth,
    );
  return key;
}

/** The console session saved by `mdp login`; exit 3 when there is none. */
export function sessionToken(env: NodeJS.ProcessEnv = process.env): string {
  const s = readConfig(env).session;
  if (!s) throw new CliError('not logged in: run `mdp login` first', EXIT.auth);
  return s.token;
}
