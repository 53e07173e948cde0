/**
 * The one registry of tools: each entry is a contract spec (name, description, zod input) plus
 * its handler and, optionally, the legacy REST route that serves the same handler. `tools/list`,
 * `/mcp/tools/list`, `/mcp/manifest` and `/.well-known/mcp.json` all read `listing`; `tools/call`
 * and the legacy routes both go through `invoke`, so a tool answers the same everywhere.
 * `tools/call` checks the tool's scope (`scopeOf`) before it runs: one endpoint that any valid key
 * may call must not open a door that the tool's own route keeps shut.
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { Scope } from '../../../contracts/accounts.ts';
import { ApiError, httpErrorBody, toApiError } from '../../../contracts/errors.ts';
import { type McpToolListing, type McpToolSpec, toolListing } from '../../../contracts/mcp-tools.ts';
import type { Principal } from '../../core/guard.ts';
import { requireScope } from '../../core/scopes.ts';
import { parseWith } from '../../core/validate.ts';

/** What a handler knows about the request that runs it. */
export type ToolContext = {
  /** The caller's key; null on public legacy routes. */
  principal: Principal | null;
  requestId: string;
  /** `{base_url}`, for absolute URLs in results (download links). */
  baseUrl: string;
  log: FastifyBaseLogger;
};

/** The legacy REST endpoint serving a tool (spec "Legacy HTTP endpoints"). */
export type LegacyRoute = {
  method: 'GET' | 'POST' | 'DELETE';
  /** fastify path, e.g. `/mcp/venues/:exchange`. */
  url: string;
  /** `mcp`: a key with the `mcp` scope (or no scopes); `public`: no key. */
  access: 'mcp' | 'public';
  /** The tool arguments of a request; default: the JSON body for POST, else the path parameters. */
  args?: (req: FastifyRequest) => unknown;
};

export type ToolDefinition<S extends z.ZodType = z.ZodType> = {
  spec: McpToolSpec<S>;
  /** Runs with parsed arguments; throws ApiError for failures the caller should see. */
  run(args: z.output<S>, ctx: ToolContext): unknown;
  legacy?: LegacyRoute;
  /**
   * The scope `tools/call` needs (null: any valid key). Default: what the legacy route needs
   * (`public` → null), else `mcp`.
   */
  scope?: Scope | null;
};

/** The scope a key needs to call `tool` through `tools/call`. */
export function scopeOf(tool: ToolDefinition): Scope | null {
  if (tool.scope !== undefined) return tool.scope;
  return tool.legacy?.access === 'public' ? null : 'mcp';
}

/** The `tools/call` result (MCP CallToolResult): the value as JSON text, or the error body. */
export type CallToolResult = { content: { type: 'text'; text: string }[]; isError: boolean };

export type ToolRegistry = {
  readonly tools: readonly ToolDefinition[];
  /** What every listing shows, in registration order. */
  readonly listing: readonly McpToolListing[];
  has(name: string): boolean;
  /** Parses `args` with the tool's schema and runs it; throws ApiError (422 on bad arguments). */
  invoke(name: string, args: unknown, ctx: ToolContext): Promise<unknown>;
  /**
   * `tools/call`: tool failures become `isError: true`; an unknown tool name (-32602) and a key
   * without the tool's scope (403 `forbidden`, -32002) throw before anything runs.
   */
  call(name: string, args: unknown, ctx: ToolContext): Promise<CallToolResult>;
};

/** The context of a request: its principal (set by `requireKey`), id and the base URL. */
export function contextOf(req: FastifyRequest, baseUrl: string): ToolContext {
  return { principal: req.principal ?? null, requestId: req.id, baseUrl, log: req.log };
}

/** Keeps the argument type of `run` tied to the spec's schema. */
export function defineTool<S extends z.ZodType>(def: ToolDefinition<S>): ToolDefinition {
  return def;
}

const text = (value: unknown) => [{ type: 'text' as const, text: JSON.stringify(value ?? null) }];

export function createToolRegistry(tools: readonly ToolDefinition[]): ToolRegistry {
  const byName = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.spec.name)) throw new Error(`tool ${tool.spec.name} registered twice`);
    byName.set(tool.spec.name, tool);
  }
  const listing = Object.freeze(tools.map((t) => toolListing(t.spec)));

  function lookup(name: string): ToolDefinition {
    const tool = byName.get(name);
    if (tool) return tool;
    throw new ApiError('invalid_params', `unknown tool: ${name}`, { field: 'name', reason: 'unknown tool' });
  }
  const run = (tool: ToolDefinition, args: unknown, ctx: ToolContext) =>
    tool.run(parseWith(tool.spec.input, args ?? {}), ctx);

  return {
    tools,
    listing,
    has: (name) => byName.has(name),
    invoke: async (name, args, ctx) => run(lookup(name), args, ctx),
    async call(name, args, ctx) {
      const tool = lookup(name);
      requireScope(ctx.principal, scopeOf(tool));
      try {
        return { content: text(await run(tool, args, ctx)), isError: false };
      } catch (e) {
        const err = toApiError(e);
        if (err.row.http >= 500) ctx.log.error({ err: e, tool: name }, 'tool failed');
        return { content: text(httpErrorBody(err, ctx.requestId)), isError: true };
      }
    },
  };
}
