/**
 * The service-level API key of a `{base_url}` process (the dashboard proxy presents it to the
 * unified stream): a key of the service account, held only in memory, revoked at stop. Each
 * process has its own, so replicas never revoke each other's.
 *
 * It is made in the background, never before the listener: once the account projection has caught
 * up with the log it found at start (so the key's creation is not answered `account_update_pending`
 * and left behind unknown), then retried with backoff until it lands. Until then `key()` is null
 * and the dashboard proxy answers 503.
 */
import { hostname } from 'node:os';
import { randomBase62 } from '../contracts/api-key-format.ts';
import { sleepBackoff } from '../platform/backoff.ts';
import type { Logger } from '../platform/logger.ts';
import type { AccountsService } from '../producers/accounts/service.ts';

export const SERVICE_EMAIL = 'dashboard-proxy@service.internal';

export type ServiceKey = { key: string; revoke(): Promise<void> };

/** Makes the key now (the projection must be able to apply its events within its deadline). */
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

export function startServiceKey(
  accounts: AccountsService,
  projection: { caughtUp(): Promise<void> },
  log: Logger,
): { key(): string | null; revoke(): Promise<void> } {
  let made: ServiceKey | null = null;
  let stopped = false;
  let creating: Promise<unknown> | null = null;
  void (async () => {
    await projection.caughtUp();
    for (let attempt = 0; !stopped; attempt++) {
      try {
        const attemptMade = createServiceKey(accounts);
        creating = attemptMade;
        made = await attemptMade;
        log.info('dashboard service key ready');
        return;
      } catch (err) {
        creating = null;
        if (stopped) return;
        log.warn({ err: String(err), attempt }, 'dashboard service key not made yet; retrying');
        await sleepBackoff(attempt, { maxMs: 30_000 });
      }
    }
  })();
  return {
    key: () => made?.key ?? null,
    async revoke() {
      stopped = true;
      // A creation under way finishes first, so its key is revoked rather than left behind.
      if (creating)
        await Promise.race([creating.catch(() => {}), new Promise((r) => setTimeout(r, 2_000).unref())]);
      if (made) await made.revoke();
    },
  };
}
