import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import {
  MAX_DURATION_SECONDS,
  manifestHash,
  manifestJsonSchema,
  normalizeManifest,
  validateManifest,
} from '../../contracts/manifest.ts';
import { DEFAULT_START_TIME_MS } from '../../producers/simulator/config.ts';

const minimal = { config: { symbol: 'BTC' }, duration_seconds: 600 };
const hashOf = (input: unknown): string => manifestHash(normalizeManifest(input));

describe('manifest: defaults and bounds', () => {
  it('fills every default: the complete model config and the driver', () => {
    const { manifest, config } = normalizeManifest(minimal);
    expect(config).toBe(manifest.config);
    expect(config).toMatchObject({
      symbol: 'BTC',
      initial_price: 65_000,
      volatility_annual: 0.6,
      seed: 42,
      start_time_ms: DEFAULT_START_TIME_MS,
      tick_size: 0.1,
      lot_size: 0.0001,
      initial_spread_bps: 1,
      book_depth: 10,
      book_update_interval_ms: 100,
      trade_intensity: 5,
      drift: 0,
      price_process: 'gbm',
      ou_mean_reversion: 365,
      ou_long_run_price: 65_000,
      latency_base_ms: 5,
      latency_jitter_ms: 2,
    });
    expect(manifest.driver).toEqual({
      multiprocess: false,
      workers: 1,
      window_seconds: 3600,
      max_retries: 2,
      backoff_seconds: 0.5,
    });
    // Idempotent: a normalized manifest normalizes to itself.
    expect(normalizeManifest(manifest).manifest).toEqual(manifest);
  });

  it('accepts every price process, ou with its own parameters', () => {
    const ou = normalizeManifest({
      config: { symbol: 'ETH', price_process: 'ou', ou_mean_reversion: 52, ou_long_run_price: 3000 },
      duration_seconds: 60,
    });
    expect(ou.config).toMatchObject({ price_process: 'ou', ou_mean_reversion: 52, ou_long_run_price: 3000 });
    const jumps = normalizeManifest({
      config: { symbol: 'SOL', price_process: 'jump_diffusion' },
      duration_seconds: 60,
    });
    expect(jumps.config.price_process).toBe('jump_diffusion');
  });

  it('accepts the bounds and rejects values just outside them', () => {
    const driver = (d: object) => ({ ...minimal, driver: d });
    const config = (c: object) => ({ ...minimal, config: { symbol: 'BTC', ...c } });
    for (const ok of [
      { ...minimal, duration_seconds: 1 },
      { ...minimal, duration_seconds: MAX_DURATION_SECONDS },
      driver({ workers: 16, window_seconds: 86_400, max_retries: 10, backoff_seconds: 60 }),
      driver({ workers: 1, window_seconds: 60, max_retries: 0, backoff_seconds: 0 }),
      config({ seed: 0, book_depth: 100, volatility_annual: 0 }),
    ]) {
      expect(validateManifest(ok).errors, JSON.stringify(ok)).toEqual([]);
    }
    for (const [bad, field] of [
      [{ ...minimal, duration_seconds: 0 }, 'duration_seconds'],
      [{ ...minimal, duration_seconds: MAX_DURATION_SECONDS + 1 }, 'duration_seconds'],
      [{ ...minimal, duration_seconds: 1.5 }, 'duration_seconds'],
      [{ duration_seconds: 60 }, 'config'],
      [{ config: {}, duration_seconds: 60 }, 'config.symbol'],
      [driver({ workers: 0 }), 'driver.workers'],
      [driver({ workers: 17 }), 'driver.workers'],
      [driver({ window_seconds: 59 }), 'driver.window_seconds'],
      [driver({ window_seconds: 90 }), 'driver.window_seconds'],
      [driver({ window_seconds: 86_460 }), 'driver.window_seconds'],
      [driver({ max_retries: 11 }), 'driver.max_retries'],
      [driver({ backoff_seconds: -1 }), 'driver.backoff_seconds'],
      [driver({ multiprocess: 'yes' }), 'driver.multiprocess'],
      [config({ book_depth: 101 }), 'config.book_depth'],
      [config({ seed: -1 }), 'config.seed'],
      [config({ price_process: 'heston' }), 'config.price_process'],
      [config({ ou_mean_reversion: -1 }), 'config.ou_mean_reversion'],
      [config({ initial_price: 100, tick_size: 50 }), 'config.tick_size'],
    ] as const) {
      const result = validateManifest(bad);
      expect(result.valid, JSON.stringify(bad)).toBe(false);
      expect(result.hash).toBeNull();
      expect(result.config).toBeNull();
      expect(result.errors.map((e) => e.field)).toContain(field);
    }
  });

  it('rejects unknown fields at every level, naming each with its path', () => {
    const result = validateManifest({
      config: { symbol: 'BTC', volatility: 0.5 },
      duration_seconds: 60,
      driver: { threads: 4 },
      priority: 'high',
    });
    expect(result.valid).toBe(false);
    expect(result.errors).toEqual(
      expect.arrayContaining([
        { field: 'config.volatility', reason: 'unknown field' },
        { field: 'driver.threads', reason: 'unknown field' },
        { field: 'priority', reason: 'unknown field' },
      ]),
    );
    expect(() => normalizeManifest({ ...minimal, extra: true })).toThrow(ZodError);
  });

  it('returns hash and complete config when valid', () => {
    const result = validateManifest(minimal);
    expect(result).toMatchObject({ valid: true, errors: [], hash: hashOf(minimal) });
    expect(result.config?.tick_size).toBe(0.1);
  });
});

describe('manifest: hash', () => {
  it('is sha256 of the canonical normalized config and duration', () => {
    expect(hashOf(minimal)).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  // Whitespace of the text a user sends: generation-http.test.ts (over HTTP, before any parsing).
  it('is the same whatever the key order or explicit defaults', () => {
    const reordered = { duration_seconds: 600, config: { symbol: 'BTC' } };
    const explicit = {
      duration_seconds: 600,
      config: {
        seed: 42,
        tick_size: 0.1,
        initial_price: 65_000,
        ou_long_run_price: 65_000,
        start_time_ms: DEFAULT_START_TIME_MS,
        price_process: 'gbm',
        symbol: 'BTC',
        volatility_annual: 0.6,
      },
    };
    expect(hashOf(reordered)).toBe(hashOf(minimal));
    expect(hashOf(explicit)).toBe(hashOf(minimal));
    expect(hashOf(normalizeManifest(minimal).manifest)).toBe(hashOf(minimal));
  });

  it('changes with every output-determining field and the duration', () => {
    const { config } = normalizeManifest(minimal);
    const base = hashOf(minimal);
    const seen = new Set([base]);
    for (const [key, value] of Object.entries(config)) {
      const changed =
        key === 'symbol'
          ? 'ETH'
          : key === 'price_process'
            ? 'ou'
            : typeof value === 'number'
              ? value === 0
                ? 0.25
                : value * 2
              : value;
      const hash = hashOf({ ...minimal, config: { ...config, [key]: changed } });
      expect(hash, key).not.toBe(base);
      seen.add(hash);
    }
    expect(seen.size).toBe(Object.keys(config).length + 1);
    expect(hashOf({ ...minimal, duration_seconds: 601 })).not.toBe(base);
  });

  it('ignores the driver, which never changes the rows', () => {
    const base = hashOf(minimal);
    for (const driver of [
      { multiprocess: true, workers: 4 },
      { window_seconds: 60 },
      { max_retries: 0, backoff_seconds: 5 },
    ]) {
      expect(hashOf({ ...minimal, driver })).toBe(base);
    }
  });
});

describe('manifest: JSON Schema', () => {
  it('describes the input: objects closed to unknown fields, required keys, defaults and bounds', () => {
    const schema = manifestJsonSchema() as {
      type: string;
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, Record<string, unknown> & { properties?: Record<string, unknown> }>;
    };
    expect(schema.type).toBe('object');
    expect(schema.required).toEqual(['config', 'duration_seconds']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.duration_seconds).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 604_800,
    });
    const config = schema.properties.config as Record<string, unknown> & {
      properties: Record<string, unknown>;
    };
    expect(config).toMatchObject({ type: 'object', required: ['symbol'], additionalProperties: false });
    expect(config.properties.price_process).toMatchObject({
      enum: ['gbm', 'jump_diffusion', 'ou'],
      default: 'gbm',
    });
    expect(config.properties.volatility_annual).toMatchObject({ type: 'number', default: 0.6 });
    expect(Object.keys(config.properties)).toEqual(
      expect.arrayContaining(['initial_price', 'seed', 'start_time_ms', 'tick_size', 'latency_jitter_ms']),
    );
    expect(schema.properties.driver).toMatchObject({
      type: 'object',
      additionalProperties: false,
      properties: { workers: { type: 'integer', minimum: 1, maximum: 16, default: 1 } },
    });
    // Plain JSON: no functions or undefined survive a round trip.
    expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  });
});
