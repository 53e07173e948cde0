/**
 * Dashboard proxy (spec "Endpoints": `{base_url}/api/v1/unified/*`): browser dashboards hold a
 * console session, not an API key, and the unified stream host refuses session tokens. This route
 * takes the session, checks the account's plan, and forwards to the unified stream with the
 * process's service-level key, streaming the answer back (backpressure through `pipe`).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import { tierAllows } from '../../contracts/limits.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { bearerToken } from '../core/credentials.ts';

export type DashboardProxyDeps = {
  accounts: AccountsService;
  /** Base URL of a unified stream gateway (read per request: it may be known only after start). */
  upstream: () => string;
  /** The service-level API key the proxy presents upstream (never sent to the browser). */
  serviceKey: () => string | null;
};

const FORWARDED_HEADERS = ['content-type', 'cache-control', 'x-request-id', 'retry-after'];

export function registerDashboardProxy(app: FastifyInstance, deps: DashboardProxyDeps): void {
  app.get('/api/v1/unified/*', async (req, reply) => {
    const accountId = await deps.accounts.sessionAccount(bearerToken(req.headers.authorization));
    const account = await deps.accounts.account(accountId);
    if (!account) throw new ApiError('session_invalid');
    if (!tierAllows(account.plan, 'unified'))
      throw new ApiError(
        'tier_restricted',
        `the unified stream needs Pro or Quant; this account's plan is ${account.plan}`,
      );
    const key = deps.serviceKey();
    if (!key) throw new ApiError('feed_unavailable', 'the dashboard proxy is not ready');

    const abort = new AbortController();
    const upstream = await fetch(`${deps.upstream()}${req.url}`, {
      headers: {
        'x-api-key': key,
        ...(req.headers['last-event-id'] ? { 'last-event-id': String(req.headers['last-event-id']) } : {}),
      },
      signal: abort.signal,
    }).catch(() => null);
    if (!upstream) throw new ApiError('upstream_unavailable', 'the unified stream is unreachable');
    reply.hijack();
    const headers: Record<string, string> = { 'x-request-id': req.id };
    for (const h of FORWARDED_HEADERS) {
      const v = upstream.headers.get(h);
      if (v && h !== 'x-request-id') headers[h] = v;
    }
    reply.raw.writeHead(upstream.status, headers);
    if (!upstream.body) return void reply.raw.end();
    const body = Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream);
    body.on('error', () => reply.raw.destroy());
    reply.raw.on('close', () => {
      abort.abort();
      body.destroy();
    });
    body.pipe(reply.raw);
  });
}
