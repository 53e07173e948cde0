/**
 * Account commands: validate, publish an event on `ACCOUNTS`, wait until the projection shows it.
 * Reads come from the KV projections. Secrets leave this file only as hashes: the API key is
 * returned to the caller once, in `createKey`'s result, and never stored or logged.
 */
import { randomBytes } from 'node:crypto';
import type { AccountBuckets, AccountsProjector } from '../../consumers/accounts/projector.ts';
import { emailIndexKey } from '../../consumers/accounts/reducer.ts';
import {
  type AccountEvent,
  type AccountView,
  ATTRIBUTION_FIELDS,
  type Attribution,
  type CreateKeyBody,
  type LoginBody,
  type RegisterBody,
  type SessionRecord,
} from '../../contracts/accounts.ts';
import { generateApiKey, keyDisplayPrefix, newAccountId, newKeyId } from '../../contracts/api-key-format.ts';
import { ApiError } from '../../contracts/errors.ts';
import { encode } from '../../platform/codec.ts';
import type { Nats } from '../../platform/nats.ts';
import { hashPassword, type Secrets, verifyPassword } from '../../platform/secrets.ts';

export type AccountsServiceDeps = {
  nats: Nats;
  projector: AccountsProjector;
  buckets: AccountBuckets;
  secrets: Secrets;
  sessionTtlMs: number;
};

export type CreatedKey = {
  key_id: string;
  key: string;
  name: string;
  prefix: string;
  tier: string;
  scopes: string[];
  created_at: number;
};

const pickAttribution = (body: Attribution): Attribution =>
  Object.fromEntries(ATTRIBUTION_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));

// A fixed hash to verify against when the email is unknown, so both paths cost one scrypt.
const DUMMY_HASH = hashPassword(randomBytes(16).toString('hex'));

export class AccountsService {
  constructor(private readonly deps: AccountsServiceDeps) {}

  private async publish(ev: AccountEvent, msgId?: string): Promise<void> {
    const ack = await this.deps.nats.js.publish(
      `acct.${ev.account_id}.${ev.type}`,
      encode(ev),
      msgId ? { msgID: msgId } : {},
    );
    await this.deps.projector.applied(ack.seq);
  }

  async register(body: RegisterBody): Promise<{ account_id: string; plan: string; jp_access: boolean }> {
    const accountId = newAccountId();
    const indexKey = emailIndexKey(body.email);
    try {
      // Atomic claim of the email before the event: two registrations cannot both win.
      await this.deps.buckets.accounts.raw.create(indexKey, encode({ account_id: accountId }));
    } catch {
      throw new ApiError('email_taken', 'an account with this email already exists');
    }
    const ev: AccountEvent = {
      type: 'registered',
      account_id: accountId,
      email: body.email,
      password_hash: await hashPassword(body.password),
      plan: body.plan,
      jp_access: body.jp_access,
      attribution: pickAttribution(body),
      at: Date.now(),
    };
    await this.publish(ev, `registered.${accountId}`);
    return { account_id: accountId, plan: body.plan, jp_access: body.jp_access };
  }

  async login(body: LoginBody): Promise<{ session_token: string; expires_at: string }> {
    const index = (await this.deps.buckets.accounts.get(emailIndexKey(body.email))) as {
      account_id: string;
    } | null;
    const view = index ? await this.account(index.account_id) : null;
    const ok = await verifyPassword(body.password, view?.password_hash ?? (await DUMMY_HASH));
    if (!view || !ok) throw new ApiError('invalid_credentials');
    const token = `mds_${randomBytes(24).toString('base64url')}`;
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

  /** The account a session token belongs to; throws 401 when missing, unknown or expired. */
  async sessionAccount(token: string | null): Promise<string> {
    const record = token
      ? ((await this.deps.buckets.sessions.get(this.deps.secrets.keyHash(token))) as SessionRecord | null)
      : null;
    if (!record || record.expires_at <= Date.now()) throw new ApiError('session_invalid');
    return record.account_id;
  }

  async logout(token: string): Promise<void> {
    const accountId = await this.sessionAccount(token);
    await this.publish({
      type: 'logged_out',
      account_id: accountId,
      session_hash: this.deps.secrets.keyHash(token),
      at: Date.now(),
    });
  }

  async account(accountId: string): Promise<AccountView | null> {
    return (await this.deps.buckets.accounts.get(accountId)) as AccountView | null;
  }

  async createKey(accountId: string, body: CreateKeyBody): Promise<CreatedKey> {
    const view = await this.account(accountId);
    if (!view) throw new ApiError('session_invalid');
    const key = generateApiKey();
    const ev = {
      type: 'key_created' as const,
      account_id: accountId,
      key_id: newKeyId(),
      key_hash: this.deps.secrets.keyHash(key),
      prefix: keyDisplayPrefix(key),
      name: body.name,
      scopes: [...new Set(body.scopes)],
      at: Date.now(),
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
    };
  }

  async revokeKey(accountId: string, keyId: string): Promise<void> {
    const view = await this.account(accountId);
    const entry = view?.keys.find((k) => k.key_id === keyId);
    if (!view || !entry) throw new ApiError('not_found', `no key ${keyId} on this account`);
    if (entry.status === 'revoked') return;
    await this.publish(
      { type: 'key_revoked', account_id: accountId, key_id: keyId, key_hash: entry.key_hash, at: Date.now() },
      `revoked.${keyId}`,
    );
  }
}
