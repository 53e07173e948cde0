/**
 * Request deadlines of every fastify surface, each ending in the error body like any other error:
 * - body: a body still arriving `bodyMs` after the headers is 408 `request_timeout` (spec "Request
 *   not completed in time"), and the connection closes, so a trickling client holds no parser;
 * - handler: a request still unanswered `handlerMs` after its body was read is 504
 *   `upstream_timeout` (handlers wait on NATS, KV or workers: "Upstream deadline missed").
 * A reply already sent or hijacked (an open stream) is never touched. A route with a deadline of
 * its own sets `config: { deadlineMs }` (a number, or null for none) instead of the default.
 */
import { PassThrough, type Readable } from 'node:stream';
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
  app.addHook('preParsing', async (req, reply, payload) => {
    // A body already received whole (most: one read with the headers) has nothing left to wait for.
    if (!hasBody(req) || req.raw.complete) return payload;
    // Not `pipeline`: destroying the request would destroy the socket before the 408 is written.
    const guarded = new PassThrough();
    const timer = setTimeout(() => {
      payload.unpipe(guarded);
      reply.header('connection', 'close');
      guarded.destroy(
        new ApiError('request_timeout', `the request body did not arrive within ${d.bodyMs} ms`),
      );
    }, d.bodyMs);
    const stop = () => clearTimeout(timer);
    payload.once('end', stop);
    payload.once('error', (err) => guarded.destroy(err));
    guarded.once('close', stop);
    payload.pipe(guarded);
    return guarded as Readable as typeof payload;
  });

  app.addHook('preValidation', async (req, reply) => {
    const own = req.routeOptions.config?.deadlineMs;
    const ms = own === undefined ? d.handlerMs : own;
    if (ms === null) return;
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      reply.send(new ApiError('upstream_timeout', `no answer within ${ms} ms`));
    }, ms);
    reply.raw.once('close', () => clearTimeout(timer));
  });
}
