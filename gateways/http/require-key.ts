/**
 * API-key protection for `{base_url}` routes: a fastify preHandler that runs the edge guard with
 * the route's scope, puts the principal on the request, adds X-RateLimit-* headers, and turns a
 * response into 401 `key_revoked` if the key was revoked while the request was in flight (`key_expired`
 * if it expired).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Scope } from '../../contracts/accounts.ts';
import { httpErrorBody } from '../../contracts/errors.ts';
import { clientAddress } from '../core/client-address.ts';
import { type Guard, type Principal, rateLimitHeaders } from '../core/guard.ts';
import { revocationError } from '../core/key-expiry.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export type RequireKey = (
  capability: Scope | null,
  opts?: { stream?: boolean },
) => preHandlerAsyncHookHandler;

/** Installs the in-flight revocation check once and returns the per-route preHandler factory. */
export function installKeyAuth(app: FastifyInstance, guard: Guard): RequireKey {
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload) => {
    const p = req.principal;
    if (!p?.revoked.aborted || reply.statusCode === 401) return payload;
    reply.code(401).header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify(
      httpErrorBody(
        revocationError(p.revoked, 'this API key was revoked while the request was in flight'),
        req.id,
      ),
    );
  });
  app.addHook('onResponse', async (req) => {
    req.principal?.release();
  });
  return (capability, opts = {}) =>
    async function requireKey(req, reply) {
      const principal = await guard.admit({
        surface: 'simulation',
        region: null, // {base_url} is in no region: `region:*` scopes do not apply here
        headers: req.headers,
        query: (req.query ?? {}) as Record<string, unknown>,
        requestId: req.id,
        clientIp: clientAddress(req.socket, req.headers),
        capability,
        stream: opts.stream ?? false,
      });
      req.principal = principal;
      if (principal.rateLimit) reply.headers(rateLimitHeaders(principal.rateLimit));
    };
}
