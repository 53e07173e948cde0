/**
 * The service-level API key of a `{base_url}` process (the dashboard proxy presents it to the
 * unified stream): a key of the service account, created at start, held only in memory, revoked at
 * stop. Each process has its own, so replicas never revoke each other's.
 */
import { hostname } from 'node:os';
import type { AccountBuckets } from '../consumers/accounts/projector.ts';
import { emailIndexKey } from '../consumers/accounts/reducer.ts';
import { randomBase62 } from '../contracts/api-key-format.ts';
import type { AccountsService } from '../producers/accounts/service.ts';

export const SERVICE_EMAIL = 'dashboard-proxy@service.internal';

export type ServiceKey = { key: string; revoke(): Promise<void> };

export async function createServiceKey(
  accounts: AccountsService,
  buckets: AccountBuckets,
): Promise<ServiceKey> {
  const index = (await buckets.accounts.get(emailIndexKey(SERVICE_EMAIL))) as { account_id: string } | null;
  const accountId =
    index?.account_id ??
    (
      await accounts.register({
        email: SERVICE_EMAIL,
        password: `Svc-${randomBase62(32)}`,
        plan: 'quant',
        jp_access: true,
        source: 'service',
      })
    ).account_id;
  const created = await accounts.createKey(accountId, {
    name: `dashboard proxy ${hostname()}/${process.pid}`,
    scopes: ['stream:read'],
  });
  return { key: created.key, revoke: () => accounts.revokeKey(accountId, created.key_id) };
}
