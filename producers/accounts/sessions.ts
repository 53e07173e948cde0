/**
 * Console sessions: log in (a random token, returned once and stored only as its hash), the account
 * of a token (401 when missing, unknown, ended or expired), log out. A session stored under a
 * previous secret still counts, and is stored again under the current one.
 */
import { randomBytes } from 'node:crypto';
import {
  type AccountEvent,
  accountSubject,
  type LoginBody,
  SESSION_TOKEN_PREFIX,
  type SessionRecord,
} from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { sessionRehashedMsgId } from '../../contracts/message-ids.ts';
import { encode } from '../../platform/msgpack.ts';
import { hashPassword, verifyPassword } from '../../platform/secrets.ts';
import { type AccountContext, pickAttribution } from './context.ts';

// A fixed hash to verify against when the email is unknown, so both paths cost one scrypt.
const DUMMY_HASH = hashPassword(randomBytes(16).toString('hex'));

export class Sessions {
  constructor(private readonly ctx: AccountContext) {}

  async login(body: LoginBody): Promise<{ session_token: string; expires_at: string }> {
    const accountId = await this.ctx.accountIdOf(body.email);
    const view = accountId ? await this.ctx.account(accountId) : null;
    const ok = await verifyPassword(body.password, view?.password_hash ?? (await DUMMY_HASH));
    if (!view || !ok) throw new ApiError('invalid_credentials');
    const token = `${SESSION_TOKEN_PREFIX}${randomBytes(24).toString('base64url')}`;
    const expiresAt = Date.now() + this.ctx.deps.sessionTtlMs;
    await this.ctx.publish({
      type: 'login_recorded',
      account_id: view.account_id,
      session_hash: this.ctx.deps.secrets.keyHash(token),
      expires_at: expiresAt,
      attribution: pickAttribution(body),
      at: Date.now(),
    });
    return { session_token: token, expires_at: new Date(expiresAt).toISOString() };
  }

  async sessionAccount(token: string | null): Promise<string> {
    if (!token) throw new ApiError('session_invalid');
    const { deps } = this.ctx;
    const [current = '', ...previous] = deps.secrets.allHashes(token);
    const record = (await deps.buckets.sessions.get(current)) as SessionRecord | null;
    if (record) return live(record);
    for (const hash of previous) {
      const old = (await deps.buckets.sessions.get(hash)) as SessionRecord | null;
      if (!old) continue;
      const accountId = live(old);
      void deps.nats.js
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
        .catch((err) => deps.log?.warn({ err: String(err) }, 'session rehash not published'));
      return accountId;
    }
    throw new ApiError('session_invalid');
  }

  async logout(token: string): Promise<void> {
    const accountId = await this.sessionAccount(token);
    const [current = '', ...previous] = this.ctx.deps.secrets.allHashes(token);
    await this.ctx.publish({
      type: 'logged_out',
      account_id: accountId,
      session_hash: current,
      ...(previous.length > 0 ? { previous_hashes: previous } : {}),
      at: Date.now(),
    });
  }
}

function live(record: SessionRecord): string {
  if (record.ended || record.expires_at <= Date.now()) throw new ApiError('session_invalid');
  return record.account_id;
}
