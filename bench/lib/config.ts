/**
 * The platform configuration as benchmarks use it: test mode, quiet logs, a throwaway secret
 * (non-development modes refuse the default one), plus the benchmark's own overrides.
 */
import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../../platform/config.ts';

const secret = `bench-${randomBytes(16).toString('hex')}`;

export function benchConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ NODE_ENV: 'test', LOG_LEVEL: 'warn', API_KEY_SECRET: secret, ...env });
}
