/**
 * An account's reducer state read back from its records (the `accounts` view and its
 * `account_keys` records), so a projector can resume from its stored position instead of replaying
 * `ACCOUNTS` from sequence 1, and can forget accounts it has not seen for a while.
 *
 * Safe because the projector applies events one after another and awaits every write: when it
 * reads an account back, the records hold every event it has applied, and possibly later ones
 * written by another projector; reducer.ts skips what the view already holds, and the rest
 * converges as the replay goes on.
 */
import type { AccountKeyRecord, AccountView } from '../../contracts/accounts.ts';
import type { AccountBuckets } from './projector.ts';
import type { AccountState, ActiveKey } from './reducer.ts';

/** The state of `accountId` as its records say, or null when it has no view (not registered yet). */
export async function hydrateAccount(
  buckets: AccountBuckets,
  accountId: string,
): Promise<AccountState | null> {
  const view = (await buckets.accounts.get(accountId)) as AccountView | null;
  if (!view) return null;
  const keys = new Map<string, ActiveKey>();
  const names: string[] = [];
  for await (const name of await buckets.accountKeys.raw.keys(`${accountId}.>`)) names.push(name);
  for (const name of names) {
    const rec = (await buckets.accountKeys.get(name)) as AccountKeyRecord | null;
    if (rec?.status !== 'active') continue;
    const { key_hashes, account_id: _a, status: _s, revoked_at: _r, seq: _q, ...rest } = rec;
    keys.set(rec.key_id, { ...rest, hashes: [...key_hashes] });
  }
  return { view: { ...view, logins: [...view.logins] }, keys };
}
