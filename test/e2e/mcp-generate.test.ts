/**
 * The whole path an agent takes: the official MCP SDK client validates a config, generates the
 * dataset through `generate_dataset` (a real worker on the JOBS queue writes the Parquet), and
 * downloads it with its key; the hash of validation equals the artifact's manifest_hash.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parquetMetadataAsync } from 'hyparquet';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStack, type TestStack } from '../support/stack.ts';

let stack: TestStack;

beforeAll(async () => {
  stack = await startStack({}, { worker: true });
});

afterAll(async () => {
  await stack?.close();
});

const textOf = (r: unknown) => JSON.parse((r as { content: { text: string }[] }).content[0]?.text ?? 'null');

it('validates, generates and downloads through MCP with one hash end to end', async () => {
  const key = (await stack.accounts.key('pro')).key;
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.http.url}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );

  const validated = textOf(
    await client.callTool({
      name: 'validate_config',
      arguments: { config: { symbol: 'SOL', seed: 5 }, duration_seconds: 120 },
    }),
  );
  expect(validated.valid).toBe(true);
  const generated = await client.callTool({
    name: 'generate_dataset',
    arguments: { symbol: 'SOL', seed: 5, duration_seconds: 120 },
  });
  expect(generated.isError).toBeFalsy();
  const out = textOf(generated);
  expect(out).toMatchObject({ status: 'completed', storage_backend: 'local', manifest_hash: validated.hash });

  const res = await fetch(out.download_url, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  const bytes = await res.arrayBuffer();
  expect(bytes.byteLength).toBe(out.content_length_bytes);
  const meta = await parquetMetadataAsync(bytes);
  expect(Number(meta.num_rows)).toBe(out.row_count);
  await client.close();
});

it('lists the same fourteen tools in all four listings of the real app', async () => {
  const key = (await stack.accounts.key('pro')).key;
  const client = new Client({ name: 'e2e-lister', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.http.url}/mcp`), {
      requestInit: { headers: { 'X-API-Key': key } },
    }),
  );
  const viaSdk = (await client.listTools()).tools;
  await client.close();
  const get = async (path: string) =>
    (await fetch(`${stack.http.url}${path}`, { headers: { 'x-api-key': key } })).json();
  const names = viaSdk.map((t) => t.name).sort();
  expect(names).toEqual(
    [
      'delete_cache',
      'export_cache',
      'export_range',
      'generate_dataset',
      'get_cache_manifest',
      'get_cache_stats',
      'get_config_schema',
      'get_health',
      'get_presets',
      'get_venue_details',
      'normalize_events',
      'simulate_funding_regime',
      'stream_cache',
      'validate_config',
    ].sort(),
  );
  expect((await get('/mcp/tools/list')).tools).toEqual(viaSdk);
  expect((await get('/mcp/manifest')).tools).toEqual(viaSdk);
  expect((await get('/.well-known/mcp.json')).tools).toEqual(viaSdk);
  for (const t of viaSdk) expect(t.inputSchema.type).toBe('object');
});
