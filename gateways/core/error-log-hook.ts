/**
 * Every error response of a fastify surface goes to the error log (spec: error logs are kept 30
 * days): its request id, catalogue code, status, route, the account whose key was presented, and
 * the time. The account comes from the guard (`RequestAccounts.identified`, called as soon as a
 * key is recognised, so refusals after that point count too); without a recognised key, none.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ErrorRecorder } from '../../contracts/status.ts';
import { clientAddress } from './client-address.ts';
import { LruCache } from './lru-cache.ts';

/** Request id → account id while the request runs (bounded; entries leave on response). */
export class RequestAccounts {
  private readonly map = new LruCache<string, string>(10_000, 10 * 60_000);

  readonly identified = (requestId: string, accountId: string): void => this.map.set(requestId, accountId);

  take(requestId: string): string | null {
    const account = this.map.get(requestId) ?? null;
    this.map.delete(requestId);
    return account;
  }
}

export type ErrorLogHookDeps = {
  surface: string;
  recorder: ErrorRecorder;
  accounts: RequestAccounts;
};

const codes = new WeakMap<FastifyRequest, string>();

type ErrorFields = { error?: unknown; request_id?: unknown };

/** The catalogue code of a serialized error body (the spec's, or a JSON-RPC one: in `error.data`), or null. */
function errorCode(payload: unknown): string | null {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return null;
  try {
    const body = JSON.parse(payload) as ErrorFields & { jsonrpc?: unknown };
    const fields = body.jsonrpc === '2.0' ? (body.error as { data?: ErrorFields } | undefined)?.data : body;
    return typeof fields?.error === 'string' && typeof fields.request_id === 'string' ? fields.error : null;
  } catch {
    return null;
  }
}

export function installErrorLog(app: FastifyInstance, deps: ErrorLogHookDeps): void {
  // Synchronous hooks with `done` (see http-hygiene.ts).
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode >= 400) {
      const code = errorCode(payload);
      if (code) codes.set(req, code);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const account = deps.accounts.take(req.id);
    const code = codes.get(req);
    // Every error body, and every 5xx even without one.
    if (!code && reply.statusCode < 500) return done();
    deps.recorder.record(
      {
        request_id: req.id,
        code: code ?? 'internal',
        status: reply.statusCode,
        method: req.method,
        route: req.routeOptions.url ?? 'unmatched',
        surface: deps.surface,
        account_id: account,
        at: Date.now(),
      },
      clientAddress(req.socket, req.headers),
    );
    done();
  });
}
