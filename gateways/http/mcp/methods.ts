/**
 * The MCP methods POST /mcp answers (spec "POST /mcp methods"): initialize, ping, tools/list,
 * tools/call. Each returns the JSON-RPC `result` or throws an ApiError (-32601 unknown method,
 * -32602 bad params). Another method = one more entry in the map.
 */
import { z } from 'zod';
import { ApiError } from '../../../contracts/errors.ts';
import { MCP_PROTOCOL_VERSION, SERVER_INFO } from '../../../contracts/mcp-tools.ts';
import type { JsonRpcCall } from '../../core/jsonrpc-envelope.ts';
import type { ToolContext, ToolRegistry } from './tool-registry.ts';

export type MethodHandler = (params: unknown, ctx: ToolContext) => unknown;
export type Methods = ReadonlyMap<string, MethodHandler>;

/** MCP may add fields to these params: unknown ones are ignored, not refused. */
const InitializeParams = z.object({
  protocolVersion: z.string().optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
  clientInfo: z.object({ name: z.string(), version: z.string() }),
});

const ToolsCallParams = z.object({
  name: z.string().min(1),
  arguments: z.record(z.string(), z.unknown()).optional(),
});

/** `params` parsed with `schema`, or -32602 naming the first bad field. */
function parseParams<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const parsed = schema.safeParse(Array.isArray(params) ? undefined : (params ?? {}));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = ['params', ...(issue?.path ?? []).map(String)].join('.');
  const reason = Array.isArray(params) ? 'expected an object' : (issue?.message ?? 'invalid');
  throw new ApiError('invalid_params', `invalid ${field}: ${reason}`, { field, reason });
}

export function createMethods(registry: ToolRegistry): Methods {
  return new Map<string, MethodHandler>([
    [
      'initialize',
      (params) => {
        parseParams(InitializeParams, params);
        // Stateless: every request stands alone, so there is no session to create.
        return {
          protocolVersion: MCP_PROTOCOL_VERSION,
          capabilities: { tools: {} },
          serverInfo: SERVER_INFO,
        };
      },
    ],
    ['ping', () => ({})],
    ['tools/list', () => ({ tools: registry.listing })],
    [
      'tools/call',
      (params, ctx) => {
        const p = parseParams(ToolsCallParams, params);
        return registry.call(p.name, p.arguments ?? {}, ctx);
      },
    ],
  ]);
}

/** Runs one call; throws ApiError for protocol-level failures. */
export async function dispatch(methods: Methods, call: JsonRpcCall, ctx: ToolContext): Promise<unknown> {
  const handler = methods.get(call.method);
  if (!handler) throw new ApiError('method_not_found', `method not found: ${call.method}`);
  return handler(call.params, ctx);
}
