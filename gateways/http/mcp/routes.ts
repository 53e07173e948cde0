/**
 * The MCP surface of `{base_url}` as one call: POST /mcp, discovery, and the legacy REST
 * endpoints, all fed by one tool registry. New tools arrive as `extraTools` (or as more entries
 * in `coreTools`): a registry entry and a handler, nothing in the envelope changes.
 */
import type { FastifyInstance } from 'fastify';
import type { GenerationPort, HealthPort } from '../ports.ts';
import type { RequireKey } from '../require-key.ts';
import { coreTools } from './core-tools.ts';
import { registerDiscoveryRoutes } from './discovery-routes.ts';
import { registerMcpEndpoint } from './endpoint.ts';
import { registerLegacyRoutes } from './legacy-routes.ts';
import { createToolRegistry, type ToolDefinition, type ToolRegistry } from './tool-registry.ts';

export type { LegacyRoute, ToolContext, ToolDefinition } from './tool-registry.ts';
export { defineTool } from './tool-registry.ts';

export type McpDeps = {
  /** From `installKeyAuth(app, guard)`. */
  requireKey: RequireKey;
  generation: GenerationPort;
  health: HealthPort;
  /** `{base_url}` without a trailing slash, e.g. `http://127.0.0.1:8080`; read per request. */
  baseUrl: () => string;
  /** More tools (normalize_events, simulate_funding_regime, …), listed after the core ones. */
  extraTools?: readonly ToolDefinition[];
};

/** Registers every MCP route on `app`; returns the registry (for tests and the root description). */
export function registerMcpRoutes(app: FastifyInstance, deps: McpDeps): ToolRegistry {
  const registry = createToolRegistry([...coreTools(deps), ...(deps.extraTools ?? [])]);
  const shared = { registry, requireKey: deps.requireKey, baseUrl: deps.baseUrl };
  registerMcpEndpoint(app, shared);
  registerDiscoveryRoutes(app, shared);
  registerLegacyRoutes(app, shared);
  return registry;
}
