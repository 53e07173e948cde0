/**
 * What discovery answers, pure: the server card (`/.well-known/mcp.json`), the legacy tool
 * manifest (`/mcp/manifest`), the session configuration schema (`/.well-known/mcp-config`) and
 * the service description (`GET /`). Every tool list here is the registry's `listing`, as is
 * `tools/list`, so they cannot drift apart.
 */
import {
  MCP_PROTOCOL_VERSION,
  type McpToolListing,
  mcpSessionConfigJsonSchema,
  SERVER_DESCRIPTION,
  SERVER_INFO,
  SERVICE_VERSION,
} from '../../../contracts/mcp-tools.ts';
import type { ToolRegistry } from './tool-registry.ts';

/** The header every authenticated request carries (spec "Authentication" §3). */
const KEY_HEADER = 'X-API-Key';

/** Public paths (no key), relative to `{base_url}`. */
export const DISCOVERY_PATHS = {
  toolList: '/mcp/tools/list',
  serverCard: '/.well-known/mcp.json',
  sessionConfig: '/.well-known/mcp-config',
} as const;

/** Server card for registries: identity, the Streamable HTTP remote and its header, the tools. */
export function serverCard(listing: readonly McpToolListing[], baseUrl: string) {
  return {
    name: SERVER_INFO.name,
    version: SERVICE_VERSION,
    description: SERVER_DESCRIPTION,
    protocolVersion: MCP_PROTOCOL_VERSION,
    serverInfo: SERVER_INFO,
    capabilities: { tools: {} },
    remotes: [
      {
        type: 'streamable-http',
        url: `${baseUrl}/mcp`,
        headers: [{ name: KEY_HEADER, description: 'Your API key.', isRequired: true, isSecret: true }],
      },
    ],
    authentication: { required: true, type: 'api_key', header: KEY_HEADER },
    configSchema: `${baseUrl}${DISCOVERY_PATHS.sessionConfig}`,
    tools: listing,
  };
}

/** Legacy `/mcp/manifest`: the tools as a list (as tools/list) and keyed by name. */
export function toolManifest(listing: readonly McpToolListing[]) {
  return {
    server: SERVER_INFO,
    protocolVersion: MCP_PROTOCOL_VERSION,
    capabilities: {
      tools: Object.fromEntries(
        listing.map((t) => [t.name, { description: t.description, inputSchema: t.inputSchema }]),
      ),
    },
    tools: listing,
  };
}

/** JSON Schema of the session configuration: the API key, taken from the `x-api-key` header. */
export function sessionConfigSchema(baseUrl: string): Record<string, unknown> {
  const { $schema, ...schema } = mcpSessionConfigJsonSchema();
  return {
    $schema,
    $id: `${baseUrl}${DISCOVERY_PATHS.sessionConfig}`,
    title: `${SERVER_INFO.name} session configuration`,
    description: `Sent on every request as the ${KEY_HEADER} header.`,
    ...schema,
  };
}

type EndpointDoc = { method: string; path: string; auth: string; purpose: string };

// The spec's service endpoints (served by other route plugins of `{base_url}`).
// biome-ignore format: a table
const SERVICE_ENDPOINTS: EndpointDoc[] = [
  { method: 'POST', path: '/mcp', auth: 'any valid key', purpose: 'MCP (JSON-RPC 2.0, Streamable HTTP, JSON responses)' },
  { method: 'POST', path: '/data/generate', auth: 'scope generate', purpose: 'Batch generation of a Parquet dataset' },
  { method: 'GET', path: '/stream/live', auth: 'scope stream', purpose: 'Live synthetic SSE stream (?symbol=&seed=)' },
  { method: 'GET', path: '/metrics', auth: 'scope metrics', purpose: 'Prometheus metrics' },
];

/** `GET /`: what the service is and where everything lives. */
export function serviceDescription(registry: ToolRegistry, baseUrl: string) {
  const legacy: EndpointDoc[] = registry.tools.flatMap((t) =>
    t.legacy
      ? [
          {
            method: t.legacy.method,
            path: t.legacy.url,
            auth: t.legacy.access === 'public' ? 'none' : 'scope mcp',
            purpose: `Legacy REST form of the ${t.spec.name} tool`,
          },
        ]
      : [],
  );
  return {
    name: SERVER_INFO.name,
    version: SERVICE_VERSION,
    description: SERVER_DESCRIPTION,
    authentication: `Send your API key in the ${KEY_HEADER} header; discovery, / and /mcp/health need none.`,
    mcp: { url: `${baseUrl}/mcp`, transport: 'streamable-http', protocolVersion: MCP_PROTOCOL_VERSION },
    links: {
      mcp: `${baseUrl}/mcp`,
      tools: `${baseUrl}${DISCOVERY_PATHS.toolList}`,
      server_card: `${baseUrl}${DISCOVERY_PATHS.serverCard}`,
      session_config: `${baseUrl}${DISCOVERY_PATHS.sessionConfig}`,
      manifest: `${baseUrl}/mcp/manifest`,
      health: `${baseUrl}/mcp/health`,
    },
    tools: registry.listing.map((t) => t.name),
    endpoints: [
      ...SERVICE_ENDPOINTS,
      { method: 'GET', path: DISCOVERY_PATHS.toolList, auth: 'none', purpose: 'Tool discovery' },
      {
        method: 'GET',
        path: DISCOVERY_PATHS.serverCard,
        auth: 'none',
        purpose: 'Server card for registries',
      },
      {
        method: 'GET',
        path: DISCOVERY_PATHS.sessionConfig,
        auth: 'none',
        purpose: 'Session configuration schema',
      },
      { method: 'GET', path: '/mcp/manifest', auth: 'scope mcp', purpose: 'Manifest of tools' },
      ...legacy,
    ],
  };
}
