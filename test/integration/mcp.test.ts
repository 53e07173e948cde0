/**
 * The MCP surface over real HTTP, with the real API-key guard against a private nats-server and
 * real accounts: the official MCP SDK client end to end, the four tool listings equal, discovery
 * without a key, the legacy endpoints (scope `mcp`) equal to their tools. The generation port is
 * a deterministic double with the spec's response shape (the real one lives elsewhere).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodError } from 'zod';
import { startEdgeGuard } from '../../app/edge-guard.ts';
import { manifestHash, manifestJsonSchema, normalizeManifest } from '../../contracts/manifest.ts';
import { MCP_PROTOCOL_VERSION, SERVER_INFO, SERVICE_VERSION } from '../../contracts/mcp-tools.ts';
import { findPreset, PRESET_NAMES } from '../../contracts/presets.ts';
import { createHttpApp } from '../../gateways/core/http-hygiene.ts';
import { invalidInput } from '../../gateways/core/validate.ts';
import { registerMcpRoutes } from '../../gateways/http/mcp/routes.ts';
import type { GenerationPort, HealthPort } from '../../gateways/http/ports.ts';
import { installKeyAuth } from '../../gateways/http/require-key.ts';
import type { Stoppable } from '../../platform/lifecycle.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import type { TestAccounts } from '../support/accounts.ts';
import { testConfig } from '../support/gateway.ts';
import { expectError } from '../support/http.ts';
import { type BaseStack, startBase } from '../support/stack.ts';

const config = testConfig();
let natsBase: BaseStack;
let nats: Nats;
let accounts: TestAccounts;
let guardPart: Stoppable;
let app: FastifyInstance;
let base = '';
const keys = { full: '', mcp: '', generateOnly: '', metricsOnly: '' };
const generateCalls: { async: boolean; keyId: string | null }[] = [];

/** Deterministic, spec-shaped generation: validates like the real port, derives ids from the hash. */
const generation: GenerationPort = {
  async generate(body, ctx) {
    let normalized: ReturnType<typeof normalizeManifest>;
    try {
      normalized = normalizeManifest(body);
    } catch (e) {
      throw invalidInput(e as ZodError, body);
    }
    generateCalls.push({ async: ctx.async, keyId: ctx.principal?.keyId ?? null });
    const hash = manifestHash(normalized);
    const jobId = `sim_batch_${hash.slice(7, 23)}`;
    const seconds = normalized.manifest.duration_seconds;
    return {
      status: 'completed',
      download_url: `${ctx.baseUrl}/artifacts/${jobId}.parquet`,
      row_count: seconds * 10,
      storage_backend: 'local',
      content_length_bytes: 4096 + seconds * 100,
      job_id: jobId,
      manifest_hash: hash,
    };
  },
};

const health: HealthPort = {
  health: async () => ({
    status: nats.nc.isClosed() ? 'degraded' : 'ok',
    version: SERVICE_VERSION,
    nats: nats.nc.isClosed() ? 'disconnected' : 'connected',
  }),
};

beforeAll(async () => {
  natsBase = await startBase(config);
  ({ nats, accounts } = natsBase);
  const edge = await startEdgeGuard(nats, config, createLogger('silent'));
  guardPart = edge.part;
  app = createHttpApp();
  const requireKey = installKeyAuth(app, edge.guard);
  registerMcpRoutes(app, { requireKey, generation, health, baseUrl: () => base });
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  keys.full = (await accounts.key('quant')).key;
  keys.mcp = (await accounts.key('quant', { scopes: ['mcp'] })).key;
  keys.generateOnly = (await accounts.key('quant', { scopes: ['generate'] })).key;
  keys.metricsOnly = (await accounts.key('basic', { scopes: ['metrics'] })).key;
});

afterAll(async () => {
  await app?.close();
  await guardPart?.stop();
  await natsBase?.close();
});

async function sdkClient(key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-integration-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { 'X-API-Key': key } },
  });
  await client.connect(transport);
  return client;
}

type ToolResult = { content: { type: string; text: string }[]; isError?: boolean };
const textOf = (r: unknown) => JSON.parse((r as ToolResult).content[0]?.text ?? 'null');
const get = (path: string, key?: string) =>
  fetch(`${base}${path}`, { headers: key ? { 'x-api-key': key } : {} });
const post = (path: string, body: unknown, key?: string) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify(body),
  });

describe('the official MCP SDK client', () => {
  it('initializes against the stateless server: protocol 2024-11-05, serverInfo 0.4.7, tools capability', async () => {
    const client = await sdkClient(keys.full);
    expect(client.getServerVersion()).toEqual(SERVER_INFO);
    expect(client.getServerVersion()?.version).toBe('0.4.7');
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    expect((client.transport as StreamableHTTPClientTransport).protocolVersion).toBe(MCP_PROTOCOL_VERSION);
    await expect(client.ping()).resolves.toEqual({});
    await client.close();
  });

  it('calls every tool and gets JSON text results', async () => {
    const client = await sdkClient(keys.full);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'get_health',
      'get_presets',
      'get_config_schema',
      'validate_config',
      'generate_dataset',
    ]);
    const call = async (name: string, args: Record<string, unknown> = {}) => {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      expect(r.isError).toBe(false);
      expect(r.content).toHaveLength(1);
      expect(r.content[0]?.type).toBe('text');
      return textOf(r);
    };
    expect(await call('get_health')).toEqual({ status: 'ok', version: '0.4.7', nats: 'connected' });
    const presets = await call('get_presets');
    expect(presets.presets.map((p: { name: string }) => p.name)).toEqual(PRESET_NAMES);
    expect(presets.presets[0]).toMatchObject({ name: 'calm', venue: 'binance', type: 'perpetual' });
    expect(await call('get_config_schema')).toEqual(manifestJsonSchema());

    const validation = await call('validate_config', {
      config: { symbol: 'BTC', seed: 7 },
      duration_seconds: 120,
    });
    expect(validation).toMatchObject({ valid: true, errors: [], duration_seconds: 120 });
    expect(validation.hash).toMatch(/^sha256:[0-9a-f]{64}$/);

    const before = generateCalls.length;
    const dataset = await call('generate_dataset', { symbol: 'BTC', seed: 7, duration_seconds: 120 });
    expect(dataset).toMatchObject({ status: 'completed', storage_backend: 'local', row_count: 1200 });
    expect(dataset.job_id).toMatch(/^sim_batch_[0-9a-f]+$/);
    expect(dataset.download_url).toBe(`${base}/artifacts/${dataset.job_id}.parquet`);
    expect(dataset.manifest_hash).toBe(validation.hash);
    expect(generateCalls.slice(before)).toEqual([{ async: false, keyId: expect.stringMatching(/.+/) }]);

    const preset = findPreset('flash-crash');
    const fromPreset = await call('generate_dataset', { preset: 'flash-crash' });
    const presetValidation = await call('validate_config', {
      config: preset?.manifest.config,
      duration_seconds: preset?.manifest.duration_seconds,
    });
    expect(fromPreset.manifest_hash).toBe(presetValidation.hash);
    await client.close();
  });

  it('gets isError with a JSON error for bad arguments of every tool', async () => {
    const client = await sdkClient(keys.full);
    // A missing field or a wrong type is invalid_params (400); a wrong value unprocessable (422).
    const bad: [string, Record<string, unknown>, string, string][] = [
      ['get_health', { verbose: true }, 'verbose', 'unprocessable'],
      ['get_presets', { venue: 'binance' }, 'venue', 'unprocessable'],
      ['get_config_schema', { format: 'yaml' }, 'format', 'unprocessable'],
      ['validate_config', { config: 'BTC' }, 'config', 'invalid_params'],
      ['generate_dataset', { symbol: 'BTC', seed: -1 }, 'seed', 'unprocessable'],
      ['generate_dataset', { preset: 'no-such-preset' }, 'preset', 'unprocessable'],
      ['generate_dataset', { duration_seconds: 60 }, 'config.symbol', 'invalid_params'],
    ];
    for (const [name, args, field, error] of bad) {
      const r = (await client.callTool({ name, arguments: args })) as ToolResult;
      expect({ name, isError: r.isError }).toEqual({ name, isError: true });
      const body = textOf(r);
      expect(body).toMatchObject({ error, request_id: expect.stringMatching(/^req_/) });
      expect(body.details.field).toBe(field);
    }
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    await client.close();
  });

  it('is refused without a valid key: 401 with the error body and no Bearer challenge', async () => {
    await expect(sdkClient('not-a-key')).rejects.toThrow();
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(res.headers.get('www-authenticate')).toBeNull();
    await expectError(res, 401, 'invalid_key');
  });
});

describe('one registry behind every listing', () => {
  it('tools/list (SDK), /mcp/tools/list, /mcp/manifest and /.well-known/mcp.json list the same tools', async () => {
    const client = await sdkClient(keys.full);
    const viaSdk = (await client.listTools()).tools;
    await client.close();
    const discovery = (await (await get('/mcp/tools/list')).json()).tools;
    const manifest = await (await get('/mcp/manifest', keys.mcp)).json();
    const card = (await (await get('/.well-known/mcp.json')).json()).tools;
    expect(viaSdk.length).toBe(5);
    expect(discovery).toEqual(viaSdk);
    expect(manifest.tools).toEqual(viaSdk);
    expect(card).toEqual(viaSdk);
    for (const t of viaSdk) {
      expect(t.inputSchema.type).toBe('object');
      expect(manifest.capabilities.tools[t.name]).toEqual({
        description: t.description,
        inputSchema: t.inputSchema,
      });
    }
  });
});

describe('discovery without a key', () => {
  it('serves the server card: name, version, description, the streamable-http remote and its header', async () => {
    const res = await get('/.well-known/mcp.json');
    expect(res.status).toBe(200);
    const card = await res.json();
    expect(card).toMatchObject({
      name: SERVER_INFO.name,
      version: '0.4.7',
      protocolVersion: '2024-11-05',
      remotes: [
        { type: 'streamable-http', url: `${base}/mcp`, headers: [{ name: 'X-API-Key', isRequired: true }] },
      ],
    });
    expect(typeof card.description).toBe('string');
  });

  it('serves the session configuration schema: apiKey from the x-api-key header', async () => {
    const schema = await (await get('/.well-known/mcp-config')).json();
    expect(schema).toMatchObject({
      $id: `${base}/.well-known/mcp-config`,
      type: 'object',
      required: ['apiKey'],
      properties: { apiKey: { type: 'string', 'x-from': { header: 'x-api-key' } } },
    });
  });

  it('describes the service at /', async () => {
    const root = await (await get('/')).json();
    expect(root).toMatchObject({ name: SERVER_INFO.name, version: '0.4.7', links: { mcp: `${base}/mcp` } });
    expect(root.endpoints).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: '/mcp/config/validate' })]),
    );
  });

  it('serves no OAuth metadata', async () => {
    await expectError(await get('/.well-known/oauth-authorization-server'), 404, 'not_found');
    await expectError(await get('/.well-known/oauth-protected-resource'), 404, 'not_found');
    await expectError(await get('/.well-known/oauth-protected-resource/mcp'), 404, 'not_found');
  });
});

describe('legacy endpoints', () => {
  const toolVia = async (name: string, args: Record<string, unknown> = {}) => {
    const client = await sdkClient(keys.full);
    try {
      return textOf(await client.callTool({ name, arguments: args }));
    } finally {
      await client.close();
    }
  };

  it('answer exactly what their tools answer', async () => {
    const validateBody = { config: { symbol: 'ETH', seed: 3 } };
    const generateBody = { symbol: 'ETH', seed: 3, duration_seconds: 90, tick_size: 0.01 };
    const pairs: [Response, string, Record<string, unknown>][] = [
      [await get('/mcp/health'), 'get_health', {}],
      [await get('/mcp/presets', keys.mcp), 'get_presets', {}],
      [await get('/mcp/config/schema', keys.mcp), 'get_config_schema', {}],
      [await post('/mcp/config/validate', validateBody, keys.mcp), 'validate_config', validateBody],
      [await post('/mcp/generate_dataset', generateBody, keys.mcp), 'generate_dataset', generateBody],
    ];
    for (const [res, tool, args] of pairs) {
      expect({ tool, status: res.status }).toEqual({ tool, status: 200 });
      expect(await res.json()).toEqual(await toolVia(tool, args));
    }
  });

  it('need scope mcp (403 forbidden otherwise) and a key (401), except /mcp/health', async () => {
    const routes: [string, 'GET' | 'POST'][] = [
      ['/mcp/manifest', 'GET'],
      ['/mcp/presets', 'GET'],
      ['/mcp/config/schema', 'GET'],
      ['/mcp/config/validate', 'POST'],
      ['/mcp/generate_dataset', 'POST'],
    ];
    const call = (path: string, method: string, key?: string) =>
      method === 'GET' ? get(path, key) : post(path, { config: { symbol: 'BTC' } }, key);
    for (const [path, method] of routes) {
      await expectError(await call(path, method, keys.generateOnly), 403, 'forbidden');
      await expectError(await call(path, method), 401, 'invalid_key');
      expect((await call(path, method, keys.full)).status).toBe(200);
    }
    expect((await get('/mcp/health')).status).toBe(200);
  });

  it('answer bad bodies with the error body and the field', async () => {
    await expectError(
      await post('/mcp/config/validate', { config: 1 }, keys.mcp),
      400,
      'invalid_params',
      'config',
    );
    await expectError(
      await post('/mcp/generate_dataset', { seed: 'x' }, keys.mcp),
      400,
      'invalid_params',
      'seed',
    );
    await expectError(
      await post('/mcp/generate_dataset', { seed: -1 }, keys.mcp),
      422,
      'unprocessable',
      'seed',
    );
  });

  it('leave initialize, tools/list and ping open to any valid key; tools/call needs the tool scope', async () => {
    const generateOnly = await sdkClient(keys.generateOnly);
    const metricsOnly = await sdkClient(keys.metricsOnly);
    const mcpOnly = await sdkClient(keys.mcp);
    try {
      for (const client of [generateOnly, metricsOnly, mcpOnly]) {
        await expect(client.ping()).resolves.toEqual({});
        expect((await client.listTools()).tools).toHaveLength(5);
        // get_health's legacy route is public: any valid key may call the tool.
        expect((await client.callTool({ name: 'get_health', arguments: {} })).isError).toBe(false);
      }
      const denied = { code: -32002, message: expect.stringMatching(/lacks the mcp scope/) };
      for (const client of [generateOnly, metricsOnly]) {
        await expect(client.callTool({ name: 'get_presets', arguments: {} })).rejects.toMatchObject(denied);
        await expect(
          client.callTool({ name: 'validate_config', arguments: { config: { symbol: 'BTC' } } }),
        ).rejects.toMatchObject(denied);
      }
      expect((await mcpOnly.callTool({ name: 'get_presets', arguments: {} })).isError).toBe(false);

      const before = generateCalls.length;
      const dataset = { name: 'generate_dataset', arguments: { symbol: 'BTC', duration_seconds: 60 } };
      for (const client of [mcpOnly, metricsOnly])
        await expect(client.callTool(dataset)).rejects.toMatchObject({
          code: -32002,
          message: expect.stringMatching(/lacks the generate scope/),
        });
      expect(generateCalls.length).toBe(before);
      expect((await generateOnly.callTool(dataset)).isError).toBe(false);
      expect(generateCalls.length).toBe(before + 1);
    } finally {
      await Promise.all([generateOnly.close(), metricsOnly.close(), mcpOnly.close()]);
    }
  });

  it('refuse tools/call over plain JSON-RPC with the error object and no result', async () => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': keys.metricsOnly },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'get_presets', arguments: {} },
      }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32002 } });
    expect(body).not.toHaveProperty('result');
  });
});
