/**
 * What every account command shares: its dependencies, publishing an event on `ACCOUNTS` and waiting
 * (at most `projectionDeadlineMs`, then 503 `account_update_pending`) until the projection shows
 * it, and the reads every concern needs (an account, the account of an email, operator rights).
 */
import {
  type AccountEvent,
  type AccountView,
  ATTRIBUTION_FIELDS,
  type Attribution,
  accountSubject,
  type EmailIndex,
  emailIndexKey,
} from '../../contracts/accounts.ts';
import type { Logger } from '../../platform/logger.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';
import type { Secrets } from '../../platform/secrets.ts';
import type { AccountReadModels, ProjectionWaiter } from './ports.ts';

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

/** Internal callers (service key, demo account, operators, tests) pass `trusted`: no plan or key-cap policy. */
export type CommandOrigin = { trusted?: boolean };

export const pickAttribution = (body: Attribution): Attribution =>
  Object.fromEntries(ATTRIBUTION_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));

export class AccountContext {
  constructor(readonly deps: AccountsServiceDeps) {}

  get deadlineMs(): number {
    return this.deps.projectionDeadlineMs ?? PROJECTION_DEADLINE_MS;
  }

  /** Publishes `ev` and waits until the projection has applied it. */
  async publish(ev: AccountEvent, msgId?: string): Promise<void> {
    const ack = await this.deps.nats.js.publish(
      accountSubject(ev.account_id, ev.type),
      encode(ev),
      msgId ? { msgID: msgId } : {},
    );
    await this.deps.projector.applied(ack.seq, this.deadlineMs);
  }

  async account(accountId: string): Promise<AccountView | null> {
    return (await this.deps.buckets.accounts.get(accountId)) as AccountView | null;
  }

  /** The account id owning `email` once its registration is projected, else null. */
  async accountIdOf(email: string): Promise<string | null> {
    const index = (await this.deps.buckets.accounts.get(emailIndexKey(email))) as EmailIndex | null;
    return index && (await this.account(index.account_id)) ? index.account_id : null;
  }

  /** Whether the account was made an operator (`operator_set`, by the local command: operator.ts). */
  async isOperator(accountId: string): Promise<boolean> {
    return (await this.account(accountId))?.operator === true;
  }
}
