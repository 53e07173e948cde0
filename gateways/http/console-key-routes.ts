/**
 * The console's API keys: create (the key in clear in that answer only), list (with each key's
 * last use; at most KEY_LIST_MAX keys, the most recently created or changed, and
 * `keyListPerAccount` listings per account: 429 beyond), edit name and scopes (a `key_updated` event: every gateway drops its cached copy at
 * once), revoke. A key of another account is a 404, as is no key at all.
 */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CreateKeyBody, UpdateKeyBody } from '../../contracts/accounts.ts';
import { KEY_ID } from '../../contracts/api-key-format.ts';
import { KEY_LIST_MAX } from '../../contracts/base-url-limits.ts';
import { ApiError } from '../../contracts/errors.ts';
import type { AccountsService } from '../../producers/accounts/service.ts';
import { clientAddress } from '../core/client-address.ts';
import { parseWith } from '../core/validate.ts';
import type { ConsoleLimits } from './console-limits.ts';
import { CONSOLE_BASE, CreatedKeyResponse, iso, KeyList, UpdatedKeyResponse } from './console-responses.ts';
import type { LastUsed } from './key-last-used.ts';

export type ConsoleKeyDeps = {
  accounts: AccountsService;
  /** When each key was last used, every region (key-last-used.ts). */
  usage: LastUsed;
  limits: ConsoleLimits;
  /** The request's account (401 without a live session; 403 for a cookie session without its CSRF token). */
  session(req: FastifyRequest): Promise<string>;
};

type KeyParams = { Params: { key_id: string } };

const tag = 'console keys';

function keyIdOf(req: FastifyRequest<KeyParams>): string {
  if (!KEY_ID.test(req.params.key_id))
    throw new ApiError('not_found', `no key ${req.params.key_id} on this account`);
  return req.params.key_id;
}

export function registerConsoleKeyRoutes(app: FastifyInstance, deps: ConsoleKeyDeps): void {
  const { accounts, session } = deps;
  const base = `${CONSOLE_BASE}/keys`;

  app.post(
    base,
    {
      config: {
        openapi: {
          summary: 'Create an API key (shown once)',
          tag,
          auth: 'session',
          body: CreateKeyBody,
          status: 201,
          response: CreatedKeyResponse,
          errors: ['invalid_params', 'unprocessable', 'key_limit', 'rate_limited'],
        },
      },
    },
    async (req, reply) => {
      const accountId = await session(req);
      const body = parseWith(CreateKeyBody, req.body ?? {});
      deps.limits.createKey(clientAddress(req.socket, req.headers), accountId);
      const key = await accounts.createKey(accountId, body);
      return reply.code(201).send({
        ...key,
        created_at: iso(key.created_at),
        expires_at: iso(key.expires_at),
        note: 'store this key now: it is shown only once',
      });
    },
  );

  app.get(
    base,
    {
      config: {
        openapi: {
          summary: "The account's keys with their last use",
          tag,
          auth: 'session',
          response: KeyList,
          errors: ['rate_limited'],
        },
      },
    },
    async (req) => {
      const accountId = await session(req);
      deps.limits.take('keyListPerAccount', accountId, 'too many key listings for this account');
      const view = await accounts.account(accountId);
      if (!view) throw new ApiError('session_invalid');
      const keys = await Promise.all(
        (await accounts.listKeys(accountId, KEY_LIST_MAX)).map(async (k) => ({
          key_id: k.key_id,
          name: k.name,
          prefix: k.prefix,
          tier: view.plan,
          scopes: k.scopes,
          status: k.status,
          created_at: iso(k.created_at),
          last_used_at: iso(await deps.usage.get(k.key_id)),
          revoked_at: iso(k.revoked_at),
          expires_at: iso(k.expires_at),
        })),
      );
      return { keys };
    },
  );

  app.patch<KeyParams>(
    `${base}/:key_id`,
    {
      config: {
        openapi: {
          summary: "Edit a key's name and scopes (applies on every gateway within a second)",
          tag,
          auth: 'session',
          body: UpdateKeyBody,
          response: UpdatedKeyResponse,
          errors: ['invalid_params', 'unprocessable', 'not_found'],
        },
      },
    },
    async (req) => {
      const accountId = await session(req);
      const keyId = keyIdOf(req);
      const body = parseWith(UpdateKeyBody, req.body ?? {});
      const view = await accounts.account(accountId);
      const k = await accounts.updateKey(accountId, keyId, body);
      return {
        key_id: k.key_id,
        name: k.name,
        prefix: k.prefix,
        tier: view?.plan,
        scopes: k.scopes,
        status: k.status,
      };
    },
  );

  app.delete<KeyParams>(
    `${base}/:key_id`,
    {
      config: {
        openapi: {
          summary: 'Revoke a key (immediate, irreversible, everywhere)',
          tag,
          auth: 'session',
          status: 204,
          errors: ['not_found'],
        },
      },
    },
    async (req, reply) => {
      const accountId = await session(req);
      await accounts.revokeKey(accountId, keyIdOf(req));
      return reply.code(204).send();
    },
  );
}
