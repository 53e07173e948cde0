/**
 * Real accounts (projector + service) in the test process, to make accounts and keys. Configured
 * like `startHttpGateway` does, except that self-service plans are on unless the test's
 * configuration sets `SELF_SERVICE_PLANS` (tests make accounts of every plan).
 */
import { randomBytes } from 'node:crypto';
import {
  type AccountBuckets,
  AccountsProjector,
  openAccountBuckets,
} from '../../consumers/accounts/projector.ts';
import type { Plan, Scope } from '../../contracts/accounts.ts';
import { TIERS, type Tier } from '../../contracts/limits.ts';
import { type Config, previousSecrets, selfServicePlans } from '../../platform/config.ts';
import { createLogger } from '../../platform/logger.ts';
import type { Nats } from '../../platform/nats.ts';
import { createSecrets, type Secrets } from '../../platform/secrets.ts';
import { setOperator } from '../../producers/accounts/operator.ts';
import { AccountsService, type AccountsServiceDeps } from '../../producers/accounts/service.ts';

export type TestAccounts = {
  service: AccountsService;
  projector: AccountsProjector;
  buckets: AccountBuckets;
  secrets: Secrets;
  /** Registers an account and returns one API key of it. */
  key(
    plan: Plan,
    opts?: { jp?: boolean; scopes?: Scope[] },
  ): Promise<{ key: string; keyId: string; accountId: string }>;
  /** One key of an account of each tier (basic, pro, quant), each its own account. */
  tierKeys(opts?: { jp?: boolean; scopes?: Scope[] }): Promise<Record<Tier, string>>;
  /** Makes the account of `email` an operator, as `npm run operator -- grant <email>` does. */
  grantOperator(email: string): Promise<void>;
  stop(): void;
};

export async function startTestAccounts(
  nats: Nats,
  config: Config,
  overrides: Partial<AccountsServiceDeps> = {},
): Promise<TestAccounts> {
  const log = createLogger(config.LOG_LEVEL, 'accounts');
  const projector = await AccountsProjector.start(nats, log);
  const buckets = await openAccountBuckets(nats);
  const secrets = createSecrets(
    config.API_KEY_SECRET,
    config.API_KEY_SECRET_VERSION,
    previousSecrets(config),
  );
  const service = new AccountsService({
    nats,
    projector,
    buckets,
    secrets,
    sessionTtlMs: 3_600_000,
    projectionDeadlineMs: config.ACCOUNT_PROJECTION_DEADLINE_MS,
    selfServicePlans: config.SELF_SERVICE_PLANS === undefined || selfServicePlans(config),
    adminKeyMaxTtlMs: config.ADMIN_KEY_MAX_TTL_S * 1_000,
    log,
    ...overrides,
  });
  const key: TestAccounts['key'] = async (plan, opts = {}) => {
    const email = `t-${randomBytes(6).toString('hex')}@example.com`;
    const { account_id } = await service.register({
      email,
      password: 'Str0ng-Passw0rd!',
      plan,
      jp_access: opts.jp ?? false,
    });
    const created = await service.createKey(account_id, { name: 'test', scopes: opts.scopes ?? [] });
    return { key: created.key, keyId: created.key_id, accountId: account_id };
  };
  return {
    service,
    projector,
    buckets,
    secrets,
    key,
    async tierKeys(opts = {}) {
      const made = await Promise.all(TIERS.map(async (tier) => [tier, (await key(tier, opts)).key] as const));
      return Object.fromEntries(made) as Record<Tier, string>;
    },
    async grantOperator(email) {
      await setOperator(nats, buckets.accounts, email, true);
    },
    stop: () => projector.stop(),
  };
}
