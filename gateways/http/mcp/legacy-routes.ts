/**
 * The legacy REST endpoints (spec "Legacy HTTP endpoints"): one route per tool that declares
 * one, running the tool's own handler through the registry, so the answer is the tool's result
 * byte for byte. Bad arguments are the spec's HTTP error body (422 with field details).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { legacyDoc } from '../openapi/legacy-doc.ts';
import type { RequireKey } from '../require-key.ts';
import { contextOf, type LegacyRoute, type ToolRegistry } from './tool-registry.ts';

export type LegacyRouteDeps = { registry: ToolRegistry; requireKey: RequireKey; baseUrl: () => string };

/** POST takes the JSON body; GET and DELETE take the path parameters (query strings are ignored). */
const defaultArgs = (legacy: LegacyRoute) =>
  legacy.method === 'POST' ? (req: FastifyRequest) => req.body : (req: FastifyRequest) => req.params;

export function registerLegacyRoutes(app: FastifyInstance, deps: LegacyRouteDeps): void {
  for (const tool of deps.registry.tools) {
    const legacy = tool.legacy;
    if (!legacy) continue;
    const argsOf = legacy.args ?? defaultArgs(legacy);
    const name = tool.spec.name;
    app.route({
      method: legacy.method,
      url: legacy.url,
      config: { openapi: legacyDoc(tool.spec, legacy) },
      preHandler: legacy.access === 'public' ? [] : [deps.requireKey('mcp')],
      handler: async (req) => deps.registry.invoke(name, argsOf(req), contextOf(req, deps.baseUrl())),
    });
  }
}
