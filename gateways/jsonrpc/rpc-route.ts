/**
 * `POST /`: JSON-RPC 2.0, one call or a batch, for every tier (`x-api-key`).
 *
 * Order: the guard admits the request (the market-data scope when the key has scopes: core/scopes.ts;
 * a failure of the whole request is the real HTTP status with
 * a JSON-RPC error body: see app.ts) → the body is decoded (-32700, -32600 for an empty batch,
 * -32006 over 100 calls, each HTTP 200) → every further call of a batch takes one more token of the
 * key (batch-charge.ts: calls past its tokens are -32000 with `retry_after`, never run) → the calls
 * run independently, at most JSONRPC_BATCH_CONCURRENCY at once (bounded-all.ts), sharing the
 * request's coin and answer budget (request-budget.ts), and their answers go back in request order. A body of
 * notifications only is 204. The body is read as text so that malformed JSON is -32700, not 400.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { ApiError } from '../../contracts/errors.ts';
import { JSONRPC_BATCH_CONCURRENCY } from '../../contracts/transport-limits.ts';
import type { Logger } from '../../platform/logger.ts';
import { chargeBatch } from '../core/batch-charge.ts';
import { clientAddress } from '../core/client-address.ts';
import { type Guard, type GuardRequest, rateLimitHeaders } from '../core/guard.ts';
import { bodiesAsText } from '../core/http-hygiene.ts';
import {
  decodeBody,
  encodeResult,
  errorResponse,
  type JsonRpcCall,
  type JsonRpcId,
  readCall,
} from '../core/jsonrpc-envelope.ts';
import { MARKET_DATA_SCOPE } from '../core/scopes.ts';
import { boundedAll } from './bounded-all.ts';
import { CallScope, callError } from './call-scope.ts';
import { RequestContext } from './context.ts';
import { type MethodTable, runCall } from './methods/index.ts';

export type RpcRouteDeps = {
  guard: Guard;
  region: 'us' | 'jp';
  methods: MethodTable;
  callTimeoutMs: number;
  log: Logger;
  /** In a region other than home: how far its copy is behind (region-copy.ts), as headers. */
  regionHeaders?: () => Record<string, string>;
};

const encodeError = (id: JsonRpcId, err: ApiError, requestId: string): string =>
  JSON.stringify(errorResponse(id, err, requestId));

const sendJson = (reply: FastifyReply, body: string) =>
  reply.type('application/json; charset=utf-8').send(body);

export function registerRpcRoute(app: FastifyInstance, deps: RpcRouteDeps): void {
  app.register(async (scope) => {
    // Scoped to this plugin: the body stays text whatever its content type.
    bodiesAsText(scope);
    scope.post('/', async (req, reply) => {
      const guardRequest: GuardRequest = {
        surface: 'jsonrpc',
        region: deps.region,
        headers: req.headers,
        query: {},
        requestId: req.id,
        clientIp: clientAddress(req.socket, req.headers),
        // Every method reads the market (eth_blockNumber is the MD stream's sequence): scopes.ts.
        capability: MARKET_DATA_SCOPE,
        stream: false,
      };
      const principal = await deps.guard.admit(guardRequest);
      if (principal.rateLimit) reply.headers(rateLimitHeaders(principal.rateLimit));
      if (deps.regionHeaders) reply.headers(deps.regionHeaders());
      const decoded = decodeBody(typeof req.body === 'string' ? req.body : '');
      if (!decoded.ok) return sendJson(reply, encodeError(null, decoded.error, req.id));

      // The admission above paid for the first call; each further one takes one more token.
      const charge = await chargeBatch(decoded.items.length, principal);
      if (charge.decision) reply.headers(rateLimitHeaders(charge.decision));
      const calls = new CallScope(principal, deps.callTimeoutMs);
      // A client that has gone stops the calls still running or waiting their turn.
      // (It may have gone already, while being admitted: its close has passed then.)
      if (reply.raw.destroyed) calls.clientGone();
      else
        reply.raw.once('close', () => {
          if (!reply.raw.writableFinished) calls.clientGone();
        });
      const ctx = new RequestContext(principal, req.id, calls);
      const failed = (call: JsonRpcCall, e: unknown): string | null => {
        const err = callError(e);
        if (err.row.http >= 500 && err.code !== 'upstream_timeout' && err.code !== 'feed_unavailable')
          req.log.error({ err: e, method: call.method }, 'json-rpc call failed');
        return call.notification ? null : encodeError(call.id, err, req.id);
      };
      const answered = (call: JsonRpcCall, json: string): string | null =>
        call.notification ? null : encodeResult(call.id, json);
      // A call answered from memory answers in the same turn: no promise, no race.
      const answer = (item: unknown, i: number): string | null | Promise<string | null> => {
        const call = readCall(item);
        if ('error' in call) return encodeError(call.id, call.error, req.id);
        try {
          if (i >= charge.admitted && charge.refusal) throw charge.refusal;
          calls.assertLive();
          const result = runCall(deps.methods, call, ctx);
          if (typeof result === 'string') return answered(call, result);
          return calls.race(result).then(
            (json) => answered(call, json),
            (e) => failed(call, e),
          );
        } catch (e) {
          return failed(call, e);
        }
      };
      let answers: (string | null)[];
      try {
        answers = await boundedAll(decoded.items, JSONRPC_BATCH_CONCURRENCY, answer);
      } finally {
        calls.end();
        principal.release();
      }
      const parts = answers.filter((a): a is string => a !== null);
      if (parts.length === 0) return reply.code(204).send();
      if (!decoded.batch) return sendJson(reply, parts[0] as string);
      // One flat string: brackets added around a join are a rope, copied again when it is written.
      parts[0] = `[${parts[0]}`;
      parts[parts.length - 1] += ']';
      return sendJson(reply, parts.join(','));
    });
  });
}
