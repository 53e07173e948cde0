/** The OpenAPI doc of a legacy MCP REST route: the tool's own input schema is the request's. */
import type { McpToolSpec } from '../../../contracts/mcp-tools.ts';
import type { LegacyRoute } from '../mcp/tool-registry.ts';
import type { RouteDoc } from './route-doc.ts';

export function legacyDoc(spec: McpToolSpec, legacy: LegacyRoute): RouteDoc {
  const hasBody = legacy.method === 'POST' && !legacy.args;
  return {
    summary: `${spec.name}: ${spec.description.split('. ')[0]}`,
    tag: 'mcp legacy',
    auth: legacy.access === 'public' ? 'none' : 'key',
    ...(legacy.access === 'public' ? {} : { scope: 'mcp' as const }),
    ...(hasBody ? { body: spec.input } : {}),
    response: { mediaType: 'application/json', description: "the tool's result" },
    errors: [
      'invalid_params',
      'unprocessable',
      ...(legacy.url.includes(':') ? (['not_found'] as const) : []),
    ],
  };
}
