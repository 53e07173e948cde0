/**
 * Discovery without a key: `GET /`, `/mcp/tools/list`, `/.well-known/mcp.json`,
 * `/.well-known/mcp-config`; and the legacy `/mcp/manifest` (scope `mcp`). No OAuth metadata is
 * served: `/.well-known/oauth-*` stay 404, so MCP clients do not start an OAuth flow.
 */
import type { FastifyInstance } from 'fastify';
import type { RequireKey } from '../require-key.ts';
import {
  DISCOVERY_PATHS,
  serverCard,
  serviceDescription,
  sessionConfigSchema,
  toolManifest,
} from './discovery.ts';
import type { ToolRegistry } from './tool-registry.ts';

export type DiscoveryRouteDeps = { registry: ToolRegistry; requireKey: RequireKey; baseUrl: () => string };

export function registerDiscoveryRoutes(app: FastifyInstance, deps: DiscoveryRouteDeps): void {
  const { registry, baseUrl } = deps;
  app.get('/', async () => serviceDescription(registry, baseUrl()));
  app.get(DISCOVERY_PATHS.toolList, async () => ({ tools: registry.listing }));
  app.get(DISCOVERY_PATHS.serverCard, async () => serverCard(registry.listing, baseUrl()));
  app.get(DISCOVERY_PATHS.sessionConfig, async () => sessionConfigSchema(baseUrl()));
  app.get('/mcp/manifest', { preHandler: deps.requireKey('mcp') }, async () =>
    toolManifest(registry.listing),
  );
}
