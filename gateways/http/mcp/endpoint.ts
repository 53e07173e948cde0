/**
 * POST /mcp: MCP over Streamable HTTP in JSON mode, stateless (no session id, no SSE). Any valid
 * key may call it. The body is read as text so that malformed JSON is answered as JSON-RPC
 * -32700 (fastify's parser would answer 400); bodies over 1 MB stay 413. JSON-RPC errors travel
 * with HTTP 200; a body of notifications only gets 202 and no body. Every call of a batch takes
 * a rate-limit token (batch-charge.ts): calls past the key's tokens are answered -32000, not run.
 */
import type { FastifyInstance } from 'fastify';
import { type ApiError, toApiError } from '../../../contracts/errors.ts';
import { chargeBatch } from '../../core/batch-charge.ts';
import { rateLimitHeaders } from '../../core/guard.ts';
import { bodiesAsText } from '../../core/http-hygiene.ts';
import {
  decodeBody,
  errorResponse,
  type JsonRpcResponse,
  type ResponseStyle,
  readCall,
  responseStyle,
  resultResponse,
} from '../../core/jsonrpc-envelope.ts';
import type { RequireKey } from '../require-key.ts';
import { createMethods, dispatch, type Methods } from './methods.ts';
import { contextOf, type ToolContext, type ToolRegistry } from './tool-registry.ts';

export type McpEndpointDeps = { registry: ToolRegistry; requireKey: RequireKey; baseUrl: () => string };

export function registerMcpEndpoint(app: FastifyInstance, deps: McpEndpointDeps): void {
  const methods = createMethods(deps.registry);
  const admit = deps.requireKey(null);
  app.register(async (scope) => {
    // Scoped to this plugin: every other route keeps fastify's JSON parser.
    bodiesAsText(scope);
    scope.post('/mcp', { preHandler: admit }, async (req, reply) => {
      const decoded = decodeBody(typeof req.body === 'string' ? req.body : '');
      if (!decoded.ok) return errorResponse(null, decoded.error, req.id);
      // The preHandler's admission paid for the first item; each further one takes one more token.
      const charge = req.principal
        ? await chargeBatch(decoded.items.length, req.principal)
        : { admitted: decoded.items.length, refusal: null, decision: null };
      if (charge.decision) reply.headers(rateLimitHeaders(charge.decision));
      const ctx = contextOf(req, deps.baseUrl());
      const style = responseStyle(req.headers.accept);
      const answers = await Promise.all(
        decoded.items.map((item, i) =>
          i < charge.admitted || !charge.refusal
            ? answer(methods, item, ctx, style)
            : refuse(item, charge.refusal, ctx.requestId),
        ),
      );
      const responses = answers.filter((a): a is JsonRpcResponse => a !== null);
      if (responses.length === 0) return reply.code(202).send();
      return decoded.batch ? responses : responses[0];
    });
  });
}

/** The answer to an item that was not admitted (never run); null for a notification. */
function refuse(item: unknown, refusal: ApiError, requestId: string): JsonRpcResponse | null {
  const call = readCall(item);
  if ('error' in call) return errorResponse(call.id, call.error, requestId);
  return call.notification ? null : errorResponse(call.id, refusal, requestId);
}

/** The response to one item of the body; null for a notification (never answered). */
async function answer(
  methods: Methods,
  item: unknown,
  ctx: ToolContext,
  style: ResponseStyle,
): Promise<JsonRpcResponse | null> {
  const call = readCall(item);
  if ('error' in call) return errorResponse(call.id, call.error, ctx.requestId);
  // Notifications (notifications/initialized, notifications/cancelled, …) need no action here.
  if (call.notification) return null;
  try {
    return resultResponse(call.id, await dispatch(methods, call, ctx), style);
  } catch (e) {
    const err = toApiError(e);
    if (err.row.http >= 500) ctx.log.error({ err: e, method: call.method }, 'mcp call failed');
    return errorResponse(call.id, err, ctx.requestId);
  }
}
