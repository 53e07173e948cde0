/**
 * Account commands, the one object the gateways hold: each command validates, publishes an event on
 * `ACCOUNTS` and waits (at most `projectionDeadlineMs`) until the projection shows it; reads come
 * from the KV projections. By concern: registration here, sessions (sessions.ts), keys (keys.ts),
 * plans (plans.ts), on a shared context (context.ts). Secrets leave these files only as hashes: an
 * API key or session token is returned to its caller once and never stored or logged. Operators
 * are made by the local `operator grant` command (operator.ts), never by registering an email.
 */
import type { AccountEvent, AccountView, Plan, RegisterBody } from '../../contracts/accounts.ts';
import { accountSubject, emailIndexKey } from '../../contracts/accounts.ts';
import { newAccountId } from '../../contracts/api-key-format.ts';
import { isApiError } from '../../contracts/errors.ts';
import { registeredMsgId } from '../../contracts/message-ids.ts';
import { encode } from '../../platform/msgpack.ts';
import { hashPassword } from '../../platform/secrets.ts';
import { AccountContext, type AccountsServiceDeps, type CommandOrigin, pickAttribution } from './context.ts';
import { claimEmail, registrationPublished } from './email-claim.ts';
import { Keys } from './keys.ts';
import { Plans } from './plans.ts';
import { Sessions } from './sessions.ts';

export { type AccountsServiceDeps, type CommandOrigin, PROJECTION_DEADLINE_MS } from './context.ts';
export type { CreatedKey } from './keys.ts';

export class AccountsService {
  private readonly ctx: AccountContext;
  private readonly sessions: Sessions;
  private readonly keys: Keys;
  private readonly plans: Plans;

  constructor(deps: AccountsServiceDeps) {
    this.ctx = new AccountContext(deps);
    this.sessions = new Sessions(this.ctx);
    this.keys = new Keys(this.ctx);
    this.plans = new Plans(this.ctx);
  }

  async register(
    body: RegisterBody,
    origin: CommandOrigin = {},
  ): Promise<{ account_id: string; plan: Plan; jp_access: boolean }> {
    const accountId = newAccountId();
    const claim = await claimEmail(
      this.ctx.deps.nats,
      this.ctx.deps.buckets.accounts.raw,
      emailIndexKey(body.email),
      accountId,
    );
    const choose = origin.trusted === true || this.ctx.deps.selfServicePlans === true;
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
      ack = await this.ctx.deps.nats.js.publish(accountSubject(accountId, 'registered'), encode(ev), {
        msgID: registeredMsgId(accountId),
      });
    } catch (err) {
      // Not registered: give the email back (unless the event landed after all).
      const landed = await registrationPublished(this.ctx.deps.nats, accountId).catch(() => true);
      if (!landed) await claim.release().catch(() => {});
      throw err;
    }
    await this.ctx.deps.projector.applied(ack.seq, this.ctx.deadlineMs);
    return { account_id: accountId, plan, jp_access: jpAccess };
  }

  /**
   * The account of a system email (demo, service), registering it if absent. Processes starting
   * together race for the email: the loser waits for the winner's registration to be projected.
   */
  async ensureSystemAccount(body: RegisterBody): Promise<string> {
    const deadline = Date.now() + this.ctx.deadlineMs;
    for (;;) {
      const existing = await this.ctx.accountIdOf(body.email);
      if (existing) return existing;
      try {
        return (await this.register(body, { trusted: true })).account_id;
      } catch (err) {
        if (!isApiError(err) || err.code !== 'email_taken' || Date.now() > deadline) throw err;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  // The other concerns, as the gateways call them.
  readonly account = (accountId: string): Promise<AccountView | null> => this.ctx.account(accountId);
  readonly accountIdOf = (email: string) => this.ctx.accountIdOf(email);
  readonly isOperator = (accountId: string) => this.ctx.isOperator(accountId);
  readonly login: Sessions['login'] = (body) => this.sessions.login(body);
  /** The account a session token belongs to; throws 401 when missing, unknown, ended or expired. */
  readonly sessionAccount: Sessions['sessionAccount'] = (token) => this.sessions.sessionAccount(token);
  readonly logout: Sessions['logout'] = (token) => this.sessions.logout(token);
  readonly listKeys: Keys['listKeys'] = (accountId, max) => this.keys.listKeys(accountId, max);
  readonly createKey: Keys['createKey'] = (accountId, body, origin) =>
    this.keys.createKey(accountId, body, origin);
  readonly updateKey: Keys['updateKey'] = (accountId, keyId, body) =>
    this.keys.updateKey(accountId, keyId, body);
  readonly revokeKey: Keys['revokeKey'] = (accountId, keyId) => this.keys.revokeKey(accountId, keyId);
  readonly setPlan: Plans['setPlan'] = (operatorId, accountId, body) =>
    this.plans.setPlan(operatorId, accountId, body);
}
