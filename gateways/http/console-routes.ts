/**
 * Console API under `/api/v1/console`: register, login/logout (session tokens for API clients, a
 * cookie session for the web console: console-session.ts), API keys (console-key-routes.ts), the
 * account, and the operators' plan change. Register, login and key creation pass the console
 * limits (console-limits.ts) first: 429 with `Retry-After`. Every route carries its OpenAPI doc,
 * whose schemas are the ones its handler parses with.
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LoginBody, RegisterBody, SetPlanBody } from '../../contracts/accounts.ts';
import { ApiError, type ErrorCode } from '../../contracts/errors.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { clientAddress } from '../core/client-address.ts';
import { parseWith } from '../core/validate.ts';
import { registerConsoleKeyRoutes } from './console-key-routes.ts';
import { ConsoleLimits } from './console-limits.ts';
import {
  AccountResponse,
  CONSOLE_BASE,
  CookieSessionResponse,
  iso,
  LoginResponse,
  PlanResponse,
  RegisteredResponse,
} from './console-responses.ts';
import type { ConsoleSessions } from './console-session.ts';
import type { LastUsed } from './key-last-used.ts';

const tag = 'console';

export function registerConsoleRoutes(
  app: FastifyInstance,
  accounts: AccountsService,
  usage: LastUsed,
  sessions: ConsoleSessions,
  limits: ConsoleLimits = new ConsoleLimits(),
): void {
  const base = CONSOLE_BASE;
  const session = (req: FastifyRequest) => sessions.account(req);

  app.post(
    `${base}/register`,
    {
      config: {
        openapi: {
          summary: 'Register an account (attribution from utm_* fields, the referrer and source)',
          tag,
          auth: 'none',
          body: RegisterBody,
          status: 201,
          response: RegisteredResponse,
          errors: ['invalid_params', 'unprocessable', 'email_taken', 'rate_limited', 'forbidden'],
        },
      },
    },
    async (req, reply) => {
      sessions.sameSite(req);
      const body = parseWith(RegisterBody, req.body);
      limits.register(clientAddress(req.socket, req.headers), body.email);
      return reply.code(201).send(await accounts.register(body));
    },
  );

  const login = async (req: FastifyRequest) => {
    sessions.sameSite(req);
    const body = parseWith(LoginBody, req.body);
    const address = clientAddress(req.socket, req.headers);
    limits.login(address, body.email);
    try {
      const started = await accounts.login(body);
      limits.loginSucceeded(address, body.email);
      return started;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'invalid_credentials')
        limits.loginFailed(address, body.email);
      throw err;
    }
  };
  const loginErrors: ErrorCode[] = [
    'invalid_params',
    'unprocessable',
    'invalid_credentials',
    'rate_limited',
    'forbidden',
  ];

  app.post(
    `${base}/login`,
    {
      config: {
        openapi: {
          summary: 'Log in: a session token for API clients (Authorization: Bearer)',
          tag,
          auth: 'none',
          body: LoginBody,
          response: LoginResponse,
          errors: loginErrors,
        },
      },
    },
    login,
  );

  const sessionDoc = {
    tag,
    response: CookieSessionResponse,
    errors: loginErrors,
  };
  app.post(
    `${base}/session`,
    {
      config: {
        openapi: {
          ...sessionDoc,
          summary: 'Log in the web console: an HttpOnly SameSite=Strict cookie session and its CSRF token',
          auth: 'none',
          body: LoginBody,
        },
      },
    },
    async (req, reply) => {
      const started = await login(req);
      const expires = new Date(started.expires_at);
      sessions.setCookie(req, reply, started.session_token, expires);
      const accountId = await accounts.sessionAccount(started.session_token);
      return {
        account_id: accountId,
        expires_at: started.expires_at,
        csrf_token: sessions.csrfOf(started.session_token),
      };
    },
  );

  app.get(
    `${base}/session`,
    {
      config: {
        openapi: {
          ...sessionDoc,
          summary: 'The current session and its CSRF token',
          auth: 'session',
          errors: [],
        },
      },
    },
    async (req) => {
      const token = sessions.token(req);
      return {
        account_id: await accounts.sessionAccount(token),
        expires_at: null,
        csrf_token: sessions.csrfOf(token ?? ''),
      };
    },
  );

  app.post(
    `${base}/logout`,
    {
      config: {
        openapi: {
          summary: 'End the session (bearer or cookie)',
          tag,
          auth: 'session',
          status: 204,
          errors: [],
        },
      },
    },
    async (req, reply) => {
      await accounts.logout(sessions.token(req) ?? '');
      sessions.clearCookie(req, reply);
      return reply.code(204).send();
    },
  );

  registerConsoleKeyRoutes(app, { accounts, usage, limits, session });

  app.get(
    `${base}/account`,
    {
      config: {
        openapi: {
          summary: 'Plan, Japan access, regions, registration and login attribution',
          tag,
          auth: 'session',
          response: AccountResponse,
          errors: [],
        },
      },
    },
    async (req) => {
      const view = await accounts.account(await session(req));
      if (!view) throw new ApiError('session_invalid');
      return {
        account_id: view.account_id,
        email: view.email,
        plan: view.plan,
        jp_access: view.jp_access,
        regions: view.jp_access ? ['us', 'jp'] : ['us'],
        created_at: iso(view.created_at),
        attribution: view.attribution,
        logins: view.logins.map((l) => ({ at: iso(l.at), attribution: l.attribution })),
      };
    },
  );

  /** Operators only (made by `npm run operator -- grant <email>`): everyone else gets 403. */
  app.put<{ Params: { account_id: string } }>(
    `${base}/accounts/:account_id/plan`,
    {
      config: {
        openapi: {
          summary: "Change an account's plan (operators only)",
          tag,
          auth: 'session',
          body: SetPlanBody,
          response: PlanResponse,
          errors: ['invalid_params', 'unprocessable', 'forbidden', 'not_found'],
        },
      },
    },
    async (req) =>
      accounts.setPlan(await session(req), req.params.account_id, parseWith(SetPlanBody, req.body ?? {})),
  );
}
