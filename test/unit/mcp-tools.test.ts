/**
 * The tool registry: listings derived from the zod schemas, argument handling of validate_config
 * and generate_dataset (same manifest, same hash), and how tool failures become `isError`.
 */

import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { manifestHash, normalizeManifest, SimulationManifest } from '../../contracts/manifest.ts';
import {
  CORE_TOOL_SPECS,
  DEFAULT_DATASET_DURATION_SECONDS,
  toolListing,
  VALIDATE_CONFIG,
} from '../../contracts/mcp-tools.ts';
import { findPreset } from '../../contracts/presets.ts';
import type { Principal } from '../../gateways/core/guard.ts';
import { coreTools } from '../../gateways/http/mcp/core-tools.ts';
import { datasetRequest, validateConfig } from '../../gateways/http/mcp/tool-args.ts';
import {
  createToolRegistry,
  defineTool,
  scopeOf,
  type ToolContext,
} from '../../gateways/http/mcp/tool-registry.ts';
import { GenerationModelConfigFields } from '../../producers/simulator/config.ts';

const silentLog = { error() {} } as unknown as ToolContext['log'];
/** A key with the given scopes ([] = everything its tier allows). */
const principal = (scopes: Scope[]): Principal => ({
  accountId: 'acc_test',
  keyId: 'key_test',
  tier: 'pro',
  sources: null,
  scopes,
  revoked: new AbortController().signal,
  rateLimit: null,
  charge: async () => null,
  release() {},
});
const ctxOf = (scopes: Scope[]): ToolContext => ({
  principal: principal(scopes),
  requestId: 'req_test',
  baseUrl: 'http://x',
  log: silentLog,
});
const ctx = ctxOf([]);
/** The JSON Schema properties of a core tool's listing. */
const props = (name: string) =>
  CORE_TOOL_SPECS.map(toolListing).find((t) => t.name === name)?.inputSchema.properties as Record<
    string,
    Record<string, unknown>
  >;

describe('tool listings', () => {
  it('list the five simulation tools once each, every inputSchema an object schema', () => {
    const listing = CORE_TOOL_SPECS.map(toolListing);
    expect(listing.map((t) => t.name)).toEqual([
      'get_health',
      'get_presets',
      'get_config_schema',
      'validate_config',
      'generate_dataset',
    ]);
    for (const t of listing) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.inputSchema).not.toHaveProperty('$schema');
      expect(t.description.length).toBeGreaterThan(20);
    }
  });

  it('derive bounds from the manifest schemas instead of restating them', () => {
    const seed = z.toJSONSchema(GenerationModelConfigFields.shape.seed, { io: 'input' }) as Record<
      string,
      unknown
    >;
    expect(props('generate_dataset').seed).toMatchObject({ minimum: seed.minimum, maximum: seed.maximum });
    const duration = z.toJSONSchema(SimulationManifest.shape.duration_seconds) as Record<string, unknown>;
    expect(props('generate_dataset').duration_seconds).toMatchObject({ maximum: duration.maximum });
    expect(props('validate_config').duration_seconds).toMatchObject({ maximum: 604_800 });
  });

  it('refuse a tool whose input is not an object schema', () => {
    expect(() => toolListing({ name: 'x', description: 'x', input: z.string() })).toThrow(/object schema/);
  });
});

describe('validate_config and generate_dataset agree on the manifest', () => {
  const generationHash = (args: Parameters<typeof datasetRequest>[0]) =>
    manifestHash(normalizeManifest(datasetRequest(args)));
  const validateArgs = (v: unknown) => VALIDATE_CONFIG.input.parse(v);

  it('hash equally with the default duration and with an explicit one', () => {
    const plain = validateConfig(validateArgs({ config: { symbol: 'BTC', seed: 7 } }));
    expect(plain).toMatchObject({ valid: true, duration_seconds: DEFAULT_DATASET_DURATION_SECONDS });
    expect(plain.hash).toBe(generationHash({ symbol: 'BTC', seed: 7 }));
    const long = validateConfig(validateArgs({ config: { symbol: 'BTC', seed: 7 }, duration_seconds: 900 }));
    expect(long.hash).toBe(generationHash({ symbol: 'BTC', seed: 7, duration_seconds: 900 }));
    expect(long.hash).not.toBe(plain.hash);
  });

  it('let flat arguments override config, and config override the preset', () => {
    const preset = findPreset('flash-crash');
    const body = datasetRequest({ preset: 'flash-crash', config: { seed: 1, book_depth: 5 }, seed: 2 });
    expect(body.config).toMatchObject({ ...preset?.manifest.config, book_depth: 5, seed: 2 });
    expect(body.duration_seconds).toBe(preset?.manifest.duration_seconds);
    expect(datasetRequest({ preset: 'calm', duration_seconds: 60 }).duration_seconds).toBe(60);
    expect(datasetRequest({ symbol: 'ETH' })).toEqual({ config: { symbol: 'ETH' }, duration_seconds: 60 });
  });

  it('accept a complete manifest as config', () => {
    const manifest = { config: { symbol: 'SOL' }, duration_seconds: 300 };
    const result = validateConfig(validateArgs({ config: manifest }));
    expect(result).toMatchObject({ valid: true, duration_seconds: 300 });
    expect(result.hash).toBe(manifestHash(normalizeManifest(manifest)));
  });

  it('report field errors of an invalid config as a result, not a failure', () => {
    const result = validateConfig(validateArgs({ config: { symbol: 'BTC', book_depth: 0, colour: 'red' } }));
    expect(result).toMatchObject({ valid: false, hash: null, config: null });
    expect(result.errors.map((e) => e.field).sort()).toEqual(['config.book_depth', 'config.colour']);
  });
});

describe('the registry', () => {
  const echo = defineTool({
    spec: { name: 'echo', description: 'echo', input: z.object({ n: z.number().int() }).strict() },
    run: ({ n }) => ({ n }),
  });
  const boom = defineTool({
    spec: { name: 'boom', description: 'boom', input: z.object({}).strict() },
    run: () => {
      throw new Error('secret internals');
    },
  });
  const registry = createToolRegistry([echo, boom]);
  const parse = (r: { content: { text: string }[] }) => JSON.parse(r.content[0]?.text ?? 'null');

  it('answers a call with the JSON text of the result', async () => {
    const r = await registry.call('echo', { n: 3 }, ctx);
    expect(r.isError).toBe(false);
    expect(parse(r)).toEqual({ n: 3 });
  });

  it('turns bad arguments into isError with the HTTP error body naming the field', async () => {
    const r = await registry.call('echo', { n: 'x' }, ctx); // a wrong type: malformed (400 rule)
    expect(r.isError).toBe(true);
    expect(parse(r)).toMatchObject({
      error: 'invalid_params',
      details: { field: 'n' },
      request_id: 'req_test',
    });
    const bad = await registry.call('echo', { n: 1.5 }, ctx); // the right type, a wrong value (422 rule)
    expect(parse(bad)).toMatchObject({ error: 'unprocessable', details: { field: 'n' } });
  });

  it('hides the internals of a failing handler', async () => {
    const r = await registry.call('boom', {}, ctx);
    expect(r.isError).toBe(true);
    expect(parse(r)).toMatchObject({ error: 'internal', message: 'Internal server error.' });
    expect(r.content[0]?.text).not.toContain('secret');
  });

  it('refuses an unknown tool as invalid params, and a name registered twice', async () => {
    await expect(registry.call('nope', {}, ctx)).rejects.toMatchObject({ code: 'invalid_params' });
    await expect(registry.invoke('nope', {}, ctx)).rejects.toBeInstanceOf(ApiError);
    expect(() => createToolRegistry([echo, echo])).toThrow(/twice/);
  });

  it('refuses tools/call before the tool runs when the key lacks the tool scope', async () => {
    let ran = 0;
    const counted = defineTool({
      spec: { name: 'counted', description: 'counted', input: z.object({}).strict() },
      run: () => ++ran,
      legacy: { method: 'GET', url: '/counted', access: 'mcp' },
    });
    const open = defineTool({
      spec: { name: 'open', description: 'open', input: z.object({}).strict() },
      run: () => 'ok',
      legacy: { method: 'GET', url: '/open', access: 'public' },
    });
    const r = createToolRegistry([counted, open]);
    for (const scopes of [['metrics'], ['generate'], ['stream:read']] as Scope[][])
      await expect(r.call('counted', {}, ctxOf(scopes))).rejects.toMatchObject({ code: 'forbidden' });
    await expect(r.call('counted', {}, { ...ctx, principal: null })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect(ran).toBe(0);
    expect((await r.call('counted', {}, ctxOf(['mcp']))).isError).toBe(false);
    expect((await r.call('counted', {}, ctxOf([]))).isError).toBe(false);
    expect((await r.call('open', {}, ctxOf(['metrics']))).isError).toBe(false);
    expect(ran).toBe(2);
  });

  it('asks generate_dataset for generate and every other core tool for what its legacy route asks', () => {
    const stub = { generate: async () => ({}), health: async () => ({}) } as never;
    const scopes = Object.fromEntries(
      coreTools({ generation: stub, health: stub }).map((t) => [t.spec.name, scopeOf(t)]),
    );
    expect(scopes).toEqual({
      get_health: null,
      get_presets: 'mcp',
      get_config_schema: 'mcp',
      validate_config: 'mcp',
      generate_dataset: 'generate',
    });
  });
});
