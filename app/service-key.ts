/**
 * The service-level API key of a `{base_url}` process (the dashboard proxy presents it to the
 * unified stream): a key of the service account, created at start, held only in memory, revoked at
 * stop. Each process has its own, so replicas never revoke each other's.
 */
import { hostname } from 'node:os';
import { randomBase62 } from '../contracts/api-key-format.ts';
import type { AccountsService } from '../producers/accounts/service.ts';

export const SERVICE_EMAIL = 'dashboard-proxy@service.internal';

export type ServiceKey = { key: string; revoke(): Promise<void> };

export async function createServiceKey(accounts: AccountsService): Promise<ServiceKey> {
  const accountId = await accounts.ensureSystemAccount({
    email: SERVICE_EMAIL,
    password: `Svc-${randomBase62(32)}`,
    plan: 'quant',
    jp_access: true,
    source: 'service',
  });
  // Trusted: a process that died without revoking leaves its key behind, so the service account is exempt from the key cap.
  const created = await accounts.createKey(
    accountId,
    { name: `dashboard proxy ${hostname()}/${process.pid}`, scopes: ['stream:read'] },
    { trusted: true },
  );
  return { key: created.key, revoke: () => accounts.revokeKey(accountId, created.key_id) };
}
