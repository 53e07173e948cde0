/**
 * What every fastify surface does the same way: a request id on every request (echoed as
 * `x-request-id`), the spec's error body for every failure, JSON 404 and 405 (with `Allow`),
 * 413 for bodies over 1 MB before parsing, no internal message in any 5xx, `Retry-After` on every
 * 429 and 503, request deadlines (408 / 504, see request-deadlines.ts), and an empty body with a
 * JSON content type read as no body (it is not malformed: `DELETE` clients often send the header).
 * A surface whose clients expect another error shape (JSON-RPC) passes its own `errorBody`; the
 * status and headers stay those of the catalogue row.
 */
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { ApiError, httpErrorBody, retryAfterSeconds, toApiError } from '../../contracts/errors.ts';
import { MAX_BODY_BYTES } from '../../contracts/limits.ts';
import { redactUrl } from '../../platform/logger.ts';
import { httpDuration, httpRequests } from '../../platform/metrics.ts';
import type { TlsOptions } from '../../platform/tls.ts';
import { RateLimitedError, rateLimitHeaders } from './guard.ts';
import { type Deadlines, installDeadlines } from './request-deadlines.ts';
import { requestIdFrom } from './request-id.ts';

/** Maps fastify's own errors to the catalogue. */
function fromFastify(err: {
  code?: string;
  statusCode?: number;
  message: string;
  validation?: unknown;
}): ApiError {
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new ApiError('payload_too_large');
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new ApiError('invalid_params', 'unsupported content type', {
      field: 'content-type',
      reason: 'use application/json',
    });
  if (err.statusCode === 400)
    return new ApiError('parse_error', 'malformed request body', { field: 'body', reason: err.message });
  return toApiError(err);
}

/** The body of an error response: the spec's HTTP error body unless a surface says otherwise. */
export type ErrorBody = (err: ApiError, requestId: string, retryAfter: number | null) => unknown;

const specErrorBody: ErrorBody = (err, requestId) => httpErrorBody(err, requestId);

function routePattern(url: string): RegExp {
  const escaped = url
    .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    .replace(/\/:[^/]+/g, '/[^/]+')
    .replace(/\*/g, '.*');
  return new RegExp(`^${escaped}/?$`);
}

/** Levels at which the request line (info) is not written. */
const ABOVE_INFO = new Set(['warn', 'error', 'fatal', 'silent']);

/**
 * `surface` labels the request metrics; `tls` (see platform/tls.ts) makes the listener HTTPS;
 * `deadlines` (from the configuration) bound body and handler time (null: none, for benchmarks);
 * `errorBody` shapes every error body (default: the spec's HTTP error body).
 */
export function createHttpApp(
  opts: FastifyServerOptions = {},
  surface = 'http',
  tls: TlsOptions | null = null,
  deadlines: Deadlines | null = null,
  errorBody: ErrorBody = specErrorBody,
): FastifyInstance {
  const app = Fastify({
    bodyLimit: MAX_BODY_BYTES,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    // Request lines are logged once, by the onResponse hook below, with credentials redacted.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Failures of the router itself (a malformed path, a path segment past 100 characters) name no
    // resource: 404 like any unknown id, with the error body like any error.
    frameworkErrors: (err, req, reply) => {
      const apiErr =
        err.code === 'FST_ERR_ASYNC_CONSTRAINT'
          ? new ApiError('internal')
          : new ApiError('not_found', 'no such resource: malformed or overlong path segment');
      (reply as unknown as FastifyReply)
        .code(apiErr.row.http)
        .header('x-request-id', req.id)
        .type('application/json; charset=utf-8')
        .send(errorBody(apiErr, req.id, null));
    },
    ...opts,
    ...(tls ? { https: tls } : {}),
  }) as unknown as FastifyInstance;
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) =>
    body.length === 0 ? done(null, undefined) : json(req, body as string, done),
  );
  if (deadlines) installDeadlines(app, deadlines);
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    routes.push({ pattern: routePattern(r.url), methods: new Set(methods) });
  });
  // Hooks on every request take `done` rather than returning a promise: each async hook costs the
  // request a promise and a microtask turn (fastify awaits it), for work that is synchronous.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    httpRequests.inc({ surface, route, method: req.method, status: reply.statusCode });
    httpDuration.observe({ surface, route, method: req.method }, reply.elapsedTime / 1_000);
    // The line's fields are built only when it is written (a busy edge logs at warn).
    if (!ABOVE_INFO.has(req.log.level))
      req.log.info(
        {
          method: req.method,
          url: redactUrl(req.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
        },
        'request',
      );
    done();
  });
  app.setErrorHandler((err, req, reply) => {
    const apiErr = err instanceof ApiError ? err : fromFastify(err as Parameters<typeof fromFastify>[0]);
    if (apiErr.row.http >= 500) req.log.error({ err }, 'request failed');
    if (apiErr instanceof RateLimitedError) reply.headers(rateLimitHeaders(apiErr.decision));
    if (!reply.hasHeader('retry-after')) {
      const retryAfter = retryAfterSeconds(apiErr);
      if (retryAfter !== null) reply.header('retry-after', String(retryAfter));
    }
    const retryAfter = reply.getHeader('retry-after');
    // JSON whatever the route had set (an artifact's 416 was about to be Parquet).
    reply
      .code(apiErr.row.http)
      .type('application/json; charset=utf-8')
      .send(errorBody(apiErr, req.id, retryAfter === undefined ? null : Number(retryAfter)));
  });
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) allowed.add(m);
    if (allowed.size > 0) {
      reply.header('allow', [...allowed].join(', '));
      const err = new ApiError(
        'method_not_allowed',
        `${req.method} is not supported on ${path}; use ${[...allowed].join(' or ')}`,
      );
      return reply.code(405).send(errorBody(err, req.id, null));
    }
    reply
      .code(404)
      .send(errorBody(new ApiError('not_found', `no route ${req.method} ${path}`), req.id, null));
  });
  return app;
}

/**
 * Every body of the routes of `scope` (a plugin of its own) as text, whatever its content type:
 * the JSON-RPC surfaces parse it themselves, so malformed JSON is -32700, not 400. Registered by
 * name as well as '*': fastify caches the parser of a type it finds by name, and looks the
 * catch-all up again (parsing the header) on every request.
 */
export function bodiesAsText(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  const asText = (_req: unknown, body: string | Buffer, done: (err: null, body: string | Buffer) => void) =>
    done(null, body);
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, asText);
  scope.addContentTypeParser('*', { parseAs: 'string' }, asText);
}
