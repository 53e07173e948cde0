/**
 * The platform configuration as benchmarks use it: test mode, quiet logs, a throwaway secret
 * (non-development modes refuse the default one), NATS_HISTORY_WIRE from the environment (to measure
 * history reads with and without platform/nats-wire), plus the benchmark's own overrides.
 */
import { randomBytes } from 'node:crypto';
import { type Config, loadConfig } from '../../platform/config.ts';

const secret = `bench-${randomBytes(16).toString('hex')}`;

export function benchConfig(env: Record<string, string> = {}): Config {
  const wire = process.env.NATS_HISTORY_WIRE;
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    API_KEY_SECRET: secret,
    ...(wire ? { NATS_HISTORY_WIRE: wire } : {}),
    ...env,
  });
}
