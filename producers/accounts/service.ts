/**
 * Account commands: validate, publish an event on `ACCOUNTS`, wait (at most `projectionDeadlineMs`)
 * until the projection shows it. Reads come from the KV projections. Secrets leave this file only as
 * hashes: the API key is returned to the caller once, in `createKey`'s result, and never stored or
 * logged. Policy kept here: self-service plans only where configured, at most
 * `MAX_ACTIVE_KEYS_PER_ACCOUNT` active keys, plan changes by operators only (made by the local
 * `operator grant` command, operator.ts, never by registering an email), and tokens hashed under
 * a previous secret still accepted (and stored again under the current one).
 */

import { randomBytes } from 'node:crypto';
import {
  type AccountEvent,
  type AccountKeyRecord,
  type AccountView,
  ADMIN_KEY_MAX_TTL_MS,
  ATTRIBUTION_FIELDS,
  type Attribution,
  accountKeyKey,
  accountSubject,
  type CreateKeyBody,
  type EmailIndex,
  emailIndexKey,
  type LoginBody,
  MAX_ACTIVE_KEYS_PER_ACCOUNT,
  type Plan,
  type RegisterBody,
  SESSION_TOKEN_PREFIX,
  type SessionRecord,
  type SetPlanBody,
  type UpdateKeyBody,
} from '../../contracts/accounts.ts';
import { generateApiKey, keyDisplayPrefix, newAccountId, newKeyId } from '../../contracts/api-key-format.ts';
import { ApiError, isApiError } from '../../contracts/errors.ts';
import { registeredMsgId, sessionRehashedMsgId } from '../../contracts/message-ids.ts';
import type { Logger } from '../../platform/logger.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import { hashPassword, type Secrets, verifyPassword } from '../../platform/secrets.ts';
import { claimEmail, registrationPublished } from './email-claim.ts';
import type { AccountReadModels, ProjectionWaiter } from './ports.ts';
import { assertMayGrant } from './scope-policy.ts';

export type AccountsServiceDeps = {
  nats: Nats;
  projector: ProjectionWaiter;
  buckets: AccountReadModels;
  secrets: Secrets;
  sessionTtlMs: number;
  /** Longest a command waits for its projection before 503 `account_update_pending`, ms. */
  projectionDeadlineMs?: number;
  /** Registration may choose the plan and Japan access (else: Basic, no Japan). */
  selfServicePlans?: boolean;
  /** Longest life of a key with `status:admin`, ms (configuration `ADMIN_KEY_MAX_TTL_S`; default ADMIN_KEY_MAX_TTL_MS). */
  adminKeyMaxTtlMs?: number;
  log?: Logger;
};

/** Default projection deadline, ms. */
export const PROJECTION_DEADLINE_MS = 5_000;

export type CreatedKey = {
  key_id: string;
  key: string;
  name: string;
  prefix: string;
  tier: string;
  scopes: string[];
  created_at: number;
  /** Unix ms after which the key is refused; null: never. */
  expires_at: number | null;
};

/** Internal callers (service key, demo account, operators, tests) pass `trusted`: no plan or key-cap policy. */
export type CommandOrigin = { trusted?: boolean };

const pickAttribution = (body: Attribution): Attribution =>
  Object.fromEntries(ATTRIBUTION_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));

// A fixed hash to verify against when the email is unknown, so both paths cost one scrypt.
const DUMMY_HASH = hashPassword(randomBytes(16).toString('hex'));

export class AccountsService {
  constructor(private readonly deps: AccountsServiceDeps) {}

  private async publish(ev: AccountEvent, msgId?: string): Promise<void> {
    const ack = await this.deps.nats.js.publish(
      accountSubject(ev.account_id, ev.type),
      encode(ev),
      msgId ? { msgID: msgId } : {},
    );
    await this.deps.projector.applied(ack.seq, this.deps.projectionDeadlineMs ?? PROJECTION_DEADLINE_MS);
  }

  async register(
    body: RegisterBody,
    origin: CommandOrigin = {},
  ): Promise<{ account_id: string; plan: Plan; jp_access: boolean }> {
    const accountId = newAccountId();
    const claim = await claimEmail(
      this.deps.nats,
      this.deps.buckets.accounts.raw,
      emailIndexKey(body.email),
      accountId,
    );
    const choose = origin.trusted === true || this.deps.selfServicePlans === true;
    const plan: Plan = choose ? body.plan : 'basic';
    const jpAccess = choose ? body.jp_access : false;
    const ev: AccountEvent = {
      type: 'registered',
      account_id: accountId,
      email: body.email,
      password_hash: await hashPassword(body.password),
      plan,
      jp_access: jpAccess,
      attribution: pickAttribution(body),
      at: Date.now(),
    };
    let ack: { seq: number };
    try {
      ack = await this.deps.nats.js.publish(accountSubject(accountId, 'registered'), encode(ev), {
        msgID: registeredMsgId(accountId),
      });
    } catch (err) {
      // Not registered: give the email back (unless the event landed after all).
      const landed = await registrationPublished(this.deps.nats, accountId).catch(() => true);
      if (!landed) await claim.release().catch(() => {});
      throw err;
    }
    await this.deps.projector.applied(ack.seq, this.deps.projectionDeadlineMs ?? PROJECTION_DEADLINE_MS);
    return { account_id: accountId, plan, jp_access: jpAccess };
  }

  /**
   * The account of a system email (demo, service), registering it if absent. Processes starting
   * together race for the email: the loser waits for the winner's registration to be projected.
   */
  async ensureSystemAccount(body: RegisterBody): Promise<string> {
    const deadline = Date.now() + (this.deps.projectionDeadlineMs ?? PROJECTION_DEADLINE_MS);
    for (;;) {
      const existing = await this.accountIdOf(body.email);
      if (existing) return existing;
      try {
        return (await this.register(body, { trusted: true })).account_id;
      } catch (err) {
        if (!isApiError(err) || err.code !== 'email_taken' || Date.now() > deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The account id owning `email` once its registration is projected, else null. */
  async accountIdOf(email: string): Promise<string | null> {
    const index = (await this.deps.buckets.accounts.get(emailIndexKey(email))) as EmailIndex | null;
    return index && (await this.account(index.account_id)) ? index.account_id : null;
  }

  async login(body: LoginBody): Promise<{ session_token: string; expires_at: string }> {
    const accountId = await this.accountIdOf(body.email);
    const view = accountId ? await this.account(accountId) : null;
    const ok = await verifyPassword(body.password, view?.password_hash ?? (await DUMMY_HASH));
    if (!view || !ok) throw new ApiError('invalid_credentials');
    const token = `${SESSION_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
    const expiresAt = Date.now() + this.deps.sessionTtlMs;
    await this.publish({
      type: 'login_recorded',
      account_id: view.account_id,
      session_hash: this.deps.secrets.keyHash(token),
      expires_at: expiresAt,
      attribution: pickAttribution(body),
      at: Date.now(),
    });
    return { session_token: token, expires_at: new Date(expiresAt).toISOString() };
  }

  /**
   * The account a session token belongs to; throws 401 when missing, unknown, ended or expired. A
   * session stored under a previous secret still counts, and is stored again under the current one.
   */
  async sessionAccount(token: string | null): Promise<string> {
    if (!token) throw new ApiError('session_invalid');
    const [current = '', ...previous] = this.deps.secrets.allHashes(token);
    const sessions = this.deps.buckets.sessions;
    const record = (await sessions.get(current)) as SessionRecord | null;
    if (record) return live(record);
    for (const hash of previous) {
      const old = (await sessions.get(hash)) as SessionRecord | null;
      if (!old) continue;
      const accountId = live(old);
      void this.deps.nats.js
        .publish(
          accountSubject(accountId, 'session_rehashed'),
          encode({
            type: 'session_rehashed',
            account_id: accountId,
            session_hash: current,
            expires_at: old.expires_at,
            at: Date.now(),
          } satisfies AccountEvent),
          { msgID: sessionRehashedMsgId(current) },
        )
        .catch((err) => this.deps.log?.warn({ err: String(err) }, 'session rehash not published'));
      return accountId;
    }
    throw new ApiError('session_invalid');
  }

  async logout(token: string): Promise<void> {
    const accountId = await this.sessionAccount(token);
    const [current = '', ...previous] = this.deps.secrets.allHashes(token);
    await this.publish({
      type: 'logged_out',
      account_id: accountId,
      session_hash: current,
      ...(previous.length > 0 ? { previous_hashes: previous } : {}),
      at: Date.now(),
    });
  }

  async account(accountId: string): Promise<AccountView | null> {
    return (await this.deps.buckets.accounts.get(accountId)) as AccountView | null;
  }

  /**
   * The keys of the account (active and revoked), oldest first. With `max`, only the `max` most
   * recently created or changed: one listing of names (they come in the order of their last
   * change), then at most `max` reads.
   */
  async listKeys(accountId: string, max = Number.POSITIVE_INFINITY): Promise<AccountKeyRecord[]> {
    const kv = this.deps.buckets.accountKeys;
    const names: string[] = [];
    for await (const k of await kv.raw.keys(`${accountId}.>`)) {
      names.push(k);
      if (names.length > max) names.shift();
    }
    const out: AccountKeyRecord[] = [];
    for (const rec of await Promise.all(names.map((k) => kv.get(k))))
      if (rec) out.push(rec as AccountKeyRecord);
    // Oldest first; keys made in the same millisecond keep the bucket's order, which is the order
    // they were written (sorting them by id would shuffle them: ids are random).
    return out.sort((a, b) => a.created_at - b.created_at);
  }

  async createKey(accountId: string, body: CreateKeyBody, origin: CommandOrigin = {}): Promise<CreatedKey> {
    const view = await this.account(accountId);
    if (!view) throw new ApiError('session_invalid');
    if (!origin.trusted) {
      await assertMayGrant(body.scopes, () => this.isOperator(accountId));
      const active = (await this.listKeys(accountId)).filter((k) => k.status === 'active').length;
      if (active >= MAX_ACTIVE_KEYS_PER_ACCOUNT)
        throw new ApiError(
          'key_limit',
          `this account has ${active} active keys (the limit is ${MAX_ACTIVE_KEYS_PER_ACCOUNT}); revoke one first`,
        );
    }
    const key = generateApiKey();
    const now = Date.now();
    const expiresAt = this.expiryOf(body.scopes, body.expires_at, now);
    const ev = {
      type: 'key_created' as const,
      account_id: accountId,
      key_id: newKeyId(),
      key_hash: this.deps.secrets.keyHash(key),
      prefix: keyDisplayPrefix(key),
      name: body.name,
      scopes: [...new Set(body.scopes)],
      ...(expiresAt !== null ? { expires_at: expiresAt } : {}),
      at: now,
    };
    await this.publish(ev);
    return {
      key_id: ev.key_id,
      key,
      name: ev.name,
      prefix: ev.prefix,
      tier: view.plan,
      scopes: ev.scopes,
      created_at: ev.at,
      expires_at: expiresAt,
    };
  }

  /**
   * A new key's expiry, Unix ms (null: never): `expires_at` must be in the future (422); a key with
   * `status:admin` expires at most `adminKeyMaxTtlMs` after `now`, that long when none is sent.
   */
  private expiryOf(scopes: readonly string[], expiresAt: string | undefined, now: number): number | null {
    const at = expiresAt === undefined ? null : Date.parse(expiresAt);
    if (at !== null && at <= now)
      throw new ApiError('unprocessable', 'expires_at must be in the future', {
        field: 'expires_at',
        reason: 'not in the future',
      });
    if (!scopes.includes('status:admin')) return at;
    const maxMs = this.deps.adminKeyMaxTtlMs ?? ADMIN_KEY_MAX_TTL_MS;
    if (at !== null && at > now + maxMs)
      throw new ApiError(
        'unprocessable',
        `a status:admin key expires within ${maxMs / 1_000} s of its creation`,
        {
          field: 'expires_at',
          reason: `over ${maxMs / 1_000} s away`,
          limit: maxMs / 1_000,
        },
      );
    return at ?? now + maxMs;
  }

  /** The account's own record of a key; 404 for a key of another account or none. */
  private async ownKey(accountId: string, keyId: string): Promise<AccountKeyRecord> {
    const entry = (await this.deps.buckets.accountKeys.get(
      accountKeyKey(accountId, keyId),
    )) as AccountKeyRecord | null;
    if (!entry) throw new ApiError('not_found', `no key ${keyId} on this account`);
    return entry;
  }

  /** New name and/or scopes of an active key; every gateway drops its cached copy on the event. */
  async updateKey(accountId: string, keyId: string, body: UpdateKeyBody): Promise<AccountKeyRecord> {
    const entry = await this.ownKey(accountId, keyId);
    if (entry.status !== 'active')
      throw new ApiError('unprocessable', `key ${keyId} is revoked; it can no longer be changed`);
    if (body.scopes) await assertMayGrant(body.scopes, () => this.isOperator(accountId));
    const maxMs = this.deps.adminKeyMaxTtlMs ?? ADMIN_KEY_MAX_TTL_MS;
    if (
      body.scopes?.includes('status:admin') &&
      !entry.scopes.includes('status:admin') &&
      (entry.expires_at == null || entry.expires_at > Date.now() + maxMs)
    )
      throw new ApiError(
        'unprocessable',
        `status:admin goes only on keys expiring within ${maxMs / 1_000} s: create a new key with it`,
        { field: 'scopes', reason: 'status:admin on a key without a short expiry' },
      );
    const ev = {
      type: 'key_updated' as const,
      account_id: accountId,
      key_id: keyId,
      key_hashes: entry.key_hashes,
      name: body.name ?? entry.name,
      scopes: body.scopes ? [...new Set(body.scopes)] : entry.scopes,
      at: Date.now(),
    };
    await this.publish(ev);
    return { ...entry, name: ev.name, scopes: ev.scopes };
  }

  async revokeKey(accountId: string, keyId: string): Promise<void> {
    const entry = await this.ownKey(accountId, keyId);
    if (entry.status === 'revoked') return;
    const [keyHash = '', ...previous] = entry.key_hashes;
    await this.publish(
      {
        type: 'key_revoked',
        account_id: accountId,
        key_id: keyId,
        key_hash: keyHash,
        ...(previous.length > 0 ? { previous_hashes: previous } : {}),
        at: Date.now(),
      },
      `revoked.${keyId}`,
    );
  }

  /** Whether the account was made an operator (`operator_set`, by the local command: operator.ts). */
  async isOperator(accountId: string): Promise<boolean> {
    return (await this.account(accountId))?.operator === true;
  }

  /** An operator changes an account's plan; anyone else gets 403. */
  async setPlan(
    operatorId: string,
    accountId: string,
    body: SetPlanBody,
  ): Promise<{ account_id: string; plan: Plan; jp_access: boolean }> {
    if (!(await this.isOperator(operatorId)))
      throw new ApiError('forbidden', 'only operator accounts may change plans');
    if (!(await this.account(accountId))) throw new ApiError('not_found', `no account ${accountId}`);
    await this.publish({
      type: 'plan_changed',
      account_id: accountId,
      plan: body.plan,
      jp_access: body.jp_access,
      by: operatorId,
      at: Date.now(),
    });
    return { account_id: accountId, plan: body.plan, jp_access: body.jp_access };
  }
}

function live(record: SessionRecord): string {
  if (record.ended || record.expires_at <= Date.now()) throw new ApiError('session_invalid');
  return record.account_id;
}
