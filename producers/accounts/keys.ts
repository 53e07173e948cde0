/**
 * API keys of an account: list, create (the key is returned once, stored only as its HMAC hash), change
 * name or scopes, revoke. Policy: at most `MAX_ACTIVE_KEYS_PER_ACCOUNT` active keys, scopes an
 * account may grant (scope-policy.ts), an expiry in the future and a short one for `status:admin`.
 * Every gateway drops its cached copy of a key on the event.
 */
import {
  type AccountKeyRecord,
  ADMIN_KEY_MAX_TTL_MS,
  accountKeyKey,
  type CreateKeyBody,
  MAX_ACTIVE_KEYS_PER_ACCOUNT,
  type UpdateKeyBody,
} from '../../contracts/accounts.ts';
import { generateApiKey, keyDisplayPrefix, newKeyId } from '../../contracts/api-key-format.ts';
import { ApiError } from '../../contracts/errors.ts';
import { keyRevokedMsgId } from '../../contracts/message-ids.ts';
import type { AccountContext, CommandOrigin } from './context.ts';
import { assertMayGrant } from './scope-policy.ts';

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

export class Keys {
  constructor(private readonly ctx: AccountContext) {}

  /**
   * The keys of the account (active and revoked), oldest first. With `max`, only the `max` most
   * recently created or changed: one listing of names (they come in the order of their last
   * change), then at most `max` reads.
   */
  async listKeys(accountId: string, max = Number.POSITIVE_INFINITY): Promise<AccountKeyRecord[]> {
    const kv = this.ctx.deps.buckets.accountKeys;
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
    const view = await this.ctx.account(accountId);
    if (!view) throw new ApiError('session_invalid');
    if (!origin.trusted) {
      await assertMayGrant(body.scopes, () => this.ctx.isOperator(accountId));
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
      key_hash: this.ctx.deps.secrets.keyHash(key),
      prefix: keyDisplayPrefix(key),
      name: body.name,
      scopes: [...new Set(body.scopes)],
      ...(expiresAt !== null ? { expires_at: expiresAt } : {}),
      at: now,
    };
    await this.ctx.publish(ev);
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
    const maxMs = this.ctx.deps.adminKeyMaxTtlMs ?? ADMIN_KEY_MAX_TTL_MS;
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
    const entry = (await this.ctx.deps.buckets.accountKeys.get(
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
    if (body.scopes) await assertMayGrant(body.scopes, () => this.ctx.isOperator(accountId));
    const maxMs = this.ctx.deps.adminKeyMaxTtlMs ?? ADMIN_KEY_MAX_TTL_MS;
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
    await this.ctx.publish(ev);
    return { ...entry, name: ev.name, scopes: ev.scopes };
  }

  async revokeKey(accountId: string, keyId: string): Promise<void> {
    const entry = await this.ownKey(accountId, keyId);
    if (entry.status === 'revoked') return;
    const [keyHash = '', ...previous] = entry.key_hashes;
    await this.ctx.publish(
      {
        type: 'key_revoked',
        account_id: accountId,
        key_id: keyId,
        key_hash: keyHash,
        ...(previous.length > 0 ? { previous_hashes: previous } : {}),
        at: Date.now(),
      },
      keyRevokedMsgId(keyId),
    );
  }
}
