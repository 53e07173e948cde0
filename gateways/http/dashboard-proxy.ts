/**
 * Dashboard proxy (spec "Endpoints": `{base_url}/api/v1/unified/*`): browser dashboards hold a
 * console session, not an API key, and the unified stream host refuses session tokens. This route
 * takes the session, checks the account's plan, and forwards to the unified stream with the
 * process's service-level key, streaming the answer back (backpressure through `pipe`).
 *
 * The session is held to the same standard as a key for the whole stream, as revocation is: the
 * account's events are watched from before the last check, so a plan change to one without the
 * unified stream ends it (terminal `tier_restricted`), and a logout ends it too: `auth_expired`
 * when the session is already seen ended, else `reconnect` (the projection may lag the event, or
 * another session of the account logged out): the client comes back with Last-Event-ID and is
 * checked again, so an ended session gets its 401 and a live one resumes without a gap.
 * Upstream sees this request's id, so a forwarded error body and `x-request-id` agree.
 *
 * The session comes as `Authorization: Bearer` or as the web console's cookie (an `EventSource`
 * cannot set headers). The viewer's own plan applies: Basic is refused, and its plan's stream cap
 * counts across all its sessions, within a share of the service key's cap (viewer-streams.ts).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ApiError, toApiError } from '../../contracts/errors.ts';
import { type Tier, tierAllows } from '../../contracts/limits.ts';
import type { Nats } from '../../platform/nats.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { watchAccount } from '../core/account-events.ts';
import { bearerToken } from '../core/credentials.ts';
import { sseErrorMessage, wholeMessages } from '../core/sse-frames.ts';
import type { ConsoleSessions } from './console-session.ts';
import { ViewerStreams } from './viewer-streams.ts';

export type DashboardProxyDeps = {
  accounts: AccountsService;
  nats: Nats;
  /** Base URL of a unified stream gateway (read per request: it may be known only after start). */
  upstream: () => string;
  /** The service-level API key the proxy presents upstream (never sent to the browser). */
  serviceKey: () => string | null;
  /** Reads the cookie session too (absent: bearer only). */
  sessions?: ConsoleSessions;
  /** The per-viewer stream caps (a fresh one when absent). */
  viewers?: ViewerStreams;
};

const FORWARDED_HEADERS = ['content-type', 'cache-control', 'retry-after'];

/** The session's account, if the session is live and its plan includes the unified stream. */
async function admitSession(
  accounts: AccountsService,
  token: string | null,
): Promise<{ accountId: string; plan: Tier }> {
  const accountId = await accounts.sessionAccount(token);
  const account = await accounts.account(accountId);
  if (!account) throw new ApiError('session_invalid');
  if (!tierAllows(account.plan, 'unified'))
    throw new ApiError(
      'tier_restricted',
      `the unified stream needs Pro or Quant; this account's plan is ${account.plan}`,
    );
  return { accountId, plan: account.plan };
}

export function registerDashboardProxy(app: FastifyInstance, deps: DashboardProxyDeps): void {
  const viewers = deps.viewers ?? new ViewerStreams();
  app.get('/api/v1/unified/*', async (req, reply) => {
    const token = deps.sessions ? deps.sessions.token(req) : bearerToken(req.headers.authorization);
    const { accountId, plan } = await admitSession(deps.accounts, token);
    const key = deps.serviceKey();
    if (!key) throw new ApiError('feed_unavailable', 'the dashboard proxy is not ready');
    const release = viewers.acquire(accountId, plan);
    reply.raw.once('close', release);

    const abort = new AbortController();
    let ended: ApiError | null = null;
    let onEnd: (err: ApiError) => void = () => {};
    const end = (err: ApiError) => {
      if (ended) return;
      ended = err;
      abort.abort();
      onEnd(err);
    };
    /** True when the session may no longer stream (and the stream has been ended). */
    const recheck = async (): Promise<boolean> => {
      try {
        await admitSession(deps.accounts, token);
        return false;
      } catch (err) {
        end(toApiError(err));
        return true;
      }
    };
    const watch = watchAccount(deps.nats, accountId, {
      event(ev) {
        if (ev.type === 'plan_changed' && !tierAllows(ev.plan, 'unified'))
          end(new ApiError('tier_restricted', `this account's plan is now ${ev.plan}`));
        else if (ev.type === 'logged_out')
          void recheck().then((gone) => {
            if (!gone)
              end(new ApiError('reconnect', 'a session of this account ended; reconnect to continue'));
          });
      },
      reconnected: () => void recheck(),
    });
    try {
      await watch.ready;
      await admitSession(deps.accounts, token); // anything before the watch is in the projections
    } catch (err) {
      watch.stop();
      throw err;
    }

    const upstream = await fetch(`${deps.upstream()}${req.url}`, {
      headers: {
        'x-api-key': key,
        'x-request-id': req.id,
        ...(req.headers['last-event-id'] ? { 'last-event-id': String(req.headers['last-event-id']) } : {}),
      },
      signal: abort.signal,
    }).catch(() => null);
    if (!upstream || ended || reply.sent) {
      watch.stop();
      abort.abort();
      if (reply.sent) return;
      throw ended ?? new ApiError('upstream_unavailable', 'the unified stream is unreachable');
    }
    reply.hijack();
    const headers: Record<string, string> = { 'x-request-id': req.id };
    for (const h of FORWARDED_HEADERS) {
      const v = upstream.headers.get(h);
      if (v) headers[h] = v;
    }
    reply.raw.writeHead(upstream.status, headers);
    if (!upstream.body) {
      watch.stop();
      return void reply.raw.end();
    }
    const body = Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream);
    if (!/^text\/event-stream/.test(upstream.headers.get('content-type') ?? '')) {
      watch.stop(); // an error body: relayed whole
      body.on('error', () => reply.raw.destroy());
      return void body.pipe(reply.raw);
    }
    const messages = wholeMessages();
    onEnd = (err) => {
      body.unpipe(messages);
      messages.unpipe(reply.raw);
      body.destroy();
      reply.raw.end(sseErrorMessage(err, req.id));
    };
    body.on('error', () => {
      if (!ended) reply.raw.destroy();
    });
    reply.raw.on('close', () => {
      watch.stop();
      abort.abort();
      body.destroy();
    });
    body.pipe(messages).pipe(reply.raw);
  });
}
