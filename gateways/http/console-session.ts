/**
 * How a console request proves its session. API clients send `Authorization: Bearer <session>`;
 * the web console's session travels in the `mdp_session` cookie (HttpOnly, SameSite=Strict, Secure
 * under TLS), which a browser `EventSource` sends too. A cookie is sent by the browser on its own,
 * so every state-changing request that relies on it must also carry `x-csrf-token`: an HMAC of the
 * session that only a page of this origin can read (from the login answer or `GET …/session`).
 * Browsers' cross-site state-changing requests (an `Origin` or `Sec-Fetch-Site` naming another
 * site) are refused whatever their credentials, so a login or a registration cannot be forged either.
 * A malformed `Origin` or session cookie is the client's mistake: 400 `invalid_params`, never a 500.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../contracts/errors.ts';
import type { Secrets } from '../../platform/secrets.ts';
import { bearerToken } from '../core/credentials.ts';

export const SESSION_COOKIE = 'mdp_session';
export const CSRF_HEADER = 'x-csrf-token';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A cookie's value from the `Cookie` header, or null; 400 when its percent-encoding is broken. */
export function cookieValue(req: FastifyRequest, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        throw new ApiError('invalid_params', `malformed ${name} cookie`, {
          field: 'Cookie',
          reason: 'bad percent-encoding',
        });
      }
    }
  }
  return null;
}

/** The host an `Origin` header names; 400 when it is not a URL. */
function originHost(origin: string): string {
  try {
    return new URL(origin).host;
  } catch {
    throw new ApiError('invalid_params', 'malformed Origin header', { field: 'Origin', reason: 'not a URL' });
  }
}

export type ConsoleSessions = {
  /** The session token of the request (bearer first, then cookie); CSRF-checked when it came from the cookie. */
  token(req: FastifyRequest): string | null;
  /**
   * The account of the request's live session (else `session_invalid`), noted as the request's
   * account so that its error responses are logged under it (the console's error look-up).
   */
  account(req: FastifyRequest): Promise<string>;
  /** The CSRF token that goes with a session token. */
  csrfOf(token: string): string;
  setCookie(req: FastifyRequest, reply: FastifyReply, token: string, expiresAt: Date): void;
  clearCookie(req: FastifyRequest, reply: FastifyReply): void;
  /** Refuses a browser's cross-site state-changing request (call first on every such route). */
  sameSite(req: FastifyRequest): void;
};

export type SessionAccounts = {
  sessionAccount(token: string | null): Promise<string>;
  /** Told the account of each request whose session resolved (the error log's attribution). */
  onIdentified?: (requestId: string, accountId: string) => void;
};

/** `secureCookies`: mark the cookie `Secure` (the service answers over TLS, here or at the balancer). */
export function consoleSessions(
  secrets: Secrets,
  secureCookies: boolean,
  accounts: SessionAccounts,
): ConsoleSessions {
  const csrfOf = (token: string) => secrets.keyHash(`csrf:${token}`);
  const attributes = (req: FastifyRequest) =>
    `Path=/; HttpOnly; SameSite=Strict${secureCookies || req.protocol === 'https' ? '; Secure' : ''}`;
  const sameSite = (req: FastifyRequest) => {
    if (SAFE_METHODS.has(req.method)) return;
    const site = req.headers['sec-fetch-site'];
    const origin = req.headers.origin;
    const host = req.headers.host;
    const crossOrigin = origin !== undefined && origin !== 'null' && host && originHost(origin) !== host;
    if (site === 'cross-site' || site === 'same-site' || crossOrigin || origin === 'null')
      throw new ApiError('forbidden', 'cross-site request refused: use the console of this origin');
  };
  const token = (req: FastifyRequest): string | null => {
    const bearer = bearerToken(req.headers.authorization);
    if (bearer) return bearer;
    const cookie = cookieValue(req, SESSION_COOKIE);
    if (!cookie || SAFE_METHODS.has(req.method)) return cookie;
    sameSite(req);
    const sent = req.headers[CSRF_HEADER];
    if (typeof sent !== 'string' || !secrets.sameHash(sent, csrfOf(cookie)))
      throw new ApiError(
        'forbidden',
        `CSRF token missing or wrong: a cookie session must send ${CSRF_HEADER} on every change`,
      );
    return cookie;
  };
  return {
    csrfOf,
    sameSite,
    token,
    async account(req) {
      const accountId = await accounts.sessionAccount(token(req));
      accounts.onIdentified?.(req.id, accountId);
      return accountId;
    },
    setCookie(req, reply, token, expiresAt) {
      const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1_000));
      reply.header('set-cookie', `${SESSION_COOKIE}=${token}; Max-Age=${maxAge}; ${attributes(req)}`);
    },
    clearCookie(req, reply) {
      reply.header('set-cookie', `${SESSION_COOKIE}=; Max-Age=0; ${attributes(req)}`);
    },
  };
}
