/**
 * `GET /api/v1/console/errors?request_id=`: the signed-in account's own error with that request
 * id (console session, bearer or cookie, like every console call), from the error log kept 30 days. Another
 * account's request id is not found: the log is read under the caller's account only.
 */
import type { FastifyInstance } from 'fastify';
import { lookupError } from '../../../consumers/status/error-lookup.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { ErrorLookupQuery } from '../../../contracts/status.ts';
import type { Nats } from '../../../platform/nats.ts';
import { parseWith } from '../../core/validate.ts';
import type { ConsoleSessions } from '../console-session.ts';
import type { RouteDoc } from '../openapi/route-doc.ts';

export function registerErrorLookupRoute(
  app: FastifyInstance,
  deps: {
    nats: Nats;
    sessions: Pick<ConsoleSessions, 'account'>;
  },
): void {
  const openapi: RouteDoc = {
    summary: "One of the signed-in account's errors by request id (kept 30 days)",
    tag: 'console',
    auth: 'session',
    query: ErrorLookupQuery,
    response: { mediaType: 'application/json', description: 'the error: code, route, status, time' },
    errors: ['invalid_params', 'not_found'],
  };
  app.get('/api/v1/console/errors', { config: { openapi } }, async (req) => {
    const accountId = await deps.sessions.account(req);
    const { request_id } = parseWith(ErrorLookupQuery, req.query ?? {}, 'text');
    const entry = await lookupError(deps.nats, accountId, request_id);
    if (!entry) throw new ApiError('not_found', `no error of this account with request id ${request_id}`);
    return { ...entry, at: new Date(entry.at).toISOString() };
  });
}
