/**
 * Console API under `/api/v1/console`: register, login/logout (session tokens), API keys
 * (create, list, revoke), the account, and the operators' plan change. Console calls carry
 * `Authorization: Bearer <session>`. Register, login and key creation pass the console limits
 * (console-limits.ts) first: 429 with `Retry-After`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CreateKeyBody, LoginBody, RegisterBody, SetPlanBody } from '../../contracts/accounts.ts';
import { KEY_ID } from '../../contracts/api-key-format.ts';
import { ApiError } from '../../contracts/errors.ts';
import type { Bucket } from '../../platform/kv.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { bearerToken } from '../core/credentials.ts';
import { parseWith } from '../core/validate.ts';
import { ConsoleLimits } from './console-limits.ts';

const iso = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : null);

const bearer = (req: FastifyRequest): string | null => bearerToken(req.headers.authorization);

export function registerConsoleRoutes(
  app: FastifyInstance,
  accounts: AccountsService,
  usage: Bucket<number>,
  limits: ConsoleLimits = new ConsoleLimits(),
): void {
  const base = '/api/v1/console';
  const session = (req: FastifyRequest) => accounts.sessionAccount(bearer(req));

  app.post(`${base}/register`, async (req, reply) => {
    const body = parseWith(RegisterBody, req.body);
    limits.register(req.ip, body.email);
    const created = await accounts.register(body);
    return reply.code(201).send(created);
  });

  app.post(`${base}/login`, async (req) => {
    const body = parseWith(LoginBody, req.body);
    limits.login(req.ip, body.email);
    try {
      const session = await accounts.login(body);
      limits.loginSucceeded(body.email);
      return session;
    } catch (err) {
      if (err instanceof ApiError && err.code === 'invalid_credentials')
        limits.loginFailed(req.ip, body.email);
      throw err;
    }
  });

  app.post(`${base}/logout`, async (req, reply) => {
    await accounts.logout(bearer(req) ?? '');
    return reply.code(204).send();
  });

  app.post(`${base}/keys`, async (req, reply) => {
    const accountId = await session(req);
    const body = parseWith(CreateKeyBody, req.body ?? {});
    limits.createKey(req.ip, accountId);
    const key = await accounts.createKey(accountId, body);
    return reply
      .code(201)
      .send({ ...key, created_at: iso(key.created_at), note: 'store this key now: it is shown only once' });
  });

  app.get(`${base}/keys`, async (req) => {
    const accountId = await session(req);
    const view = await accounts.account(accountId);
    if (!view) throw new ApiError('session_invalid');
    const keys = await Promise.all(
      (await accounts.listKeys(accountId)).map(async (k) => ({
        key_id: k.key_id,
        name: k.name,
        prefix: k.prefix,
        tier: view.plan,
        scopes: k.scopes,
        status: k.status,
        created_at: iso(k.created_at),
        last_used_at: iso(await usage.get(k.key_id)),
        revoked_at: iso(k.revoked_at),
      })),
    );
    return { keys };
  });

  app.delete<{ Params: { key_id: string } }>(`${base}/keys/:key_id`, async (req, reply) => {
    const accountId = await session(req);
    if (!KEY_ID.test(req.params.key_id))
      throw new ApiError('not_found', `no key ${req.params.key_id} on this account`);
    await accounts.revokeKey(accountId, req.params.key_id);
    return reply.code(204).send();
  });

  app.get(`${base}/account`, async (req) => {
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
  });

  /** Operators only (configuration `OPERATOR_EMAILS`): everyone else gets 403. */
  app.put<{ Params: { account_id: string } }>(`${base}/accounts/:account_id/plan`, async (req) =>
    accounts.setPlan(await session(req), req.params.account_id, parseWith(SetPlanBody, req.body ?? {})),
  );
}
