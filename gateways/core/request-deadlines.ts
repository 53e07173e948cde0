/**
 * Request deadlines of every fastify surface, each ending in the error body like any other error:
 * - body: a body still arriving `bodyMs` after the headers is 408 `request_timeout` (spec "Request
 *   not completed in time"), and the connection closes, so a trickling client holds no parser;
 * - handler: a request still unanswered `handlerMs` after its body was read is 504
 *   `upstream_timeout` (handlers wait on NATS, KV or workers: "Upstream deadline missed").
 * A reply already sent or hijacked (an open stream) is never touched. A route with a deadline of
 * its own sets `config: { deadlineMs }` (a number, or null for none) instead of the default.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's handler deadline, ms; null: none; absent: the surface's default. */
    deadlineMs?: number | null;
  }
}

export type Deadlines = { bodyMs: number; handlerMs: number };

const hasBody = (req: FastifyRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

export function installDeadlines(app: FastifyInstance, d: Deadlines): void {
  // Synchronous hooks with `done` (see http-hygiene.ts).
  app.addHook('preParsing', (req, reply, payload, done) => {
    // A body already received whole has nothing left to wait for.
    if (!hasBody(req) || req.raw.complete) return done(null, payload);
    // The body parser listens for 'error' on the stream it reads: the 408 goes through it like any
    // parse failure. No stream in between (one per request cost more than the rest of this hook),
    // and not `destroy`: that would close the socket before the 408 is written.
    const timer = setTimeout(() => {
      const err = new ApiError('request_timeout', `the request body did not arrive within ${d.bodyMs} ms`);
      reply.header('connection', 'close');
      if (payload.listenerCount('error') > 0) payload.emit('error', err);
      else if (!reply.sent) reply.send(err);
    }, d.bodyMs);
    const stop = () => clearTimeout(timer);
    payload.once('end', stop);
    payload.once('close', stop);
    done(null, payload);
  });

  app.addHook('preValidation', (req, reply, done) => {
    const own = req.routeOptions.config?.deadlineMs;
    const ms = own === undefined ? d.handlerMs : own;
    if (ms === null) return done();
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      reply.send(new ApiError('upstream_timeout', `no answer within ${ms} ms`));
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });
}
