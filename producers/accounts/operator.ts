/**
 * Operator rights are given and taken by an explicit local act, never won: registering an address
 * (emails are not verified) makes no operator. `setOperator` is that act: it publishes
 * `operator_set` on `ACCOUNTS` for the account of `email`, which only a holder of the service's NATS
 * credentials can do (the `npm run operator -- grant|revoke <email>` command, app/operator.ts), and
 * settles once the account view shows it (the console, the status API and key creation read it
 * there), or rejects after `deadlineMs`.
 */
import {
  type AccountEvent,
  type AccountView,
  accountSubject,
  type EmailIndex,
  emailIndexKey,
} from '../../contracts/accounts.ts';
import type { Bucket } from '../../platform/kv.ts';
import { encode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

/** How often the account view is read while waiting for the projection, ms. */
const POLL_MS = 50;

export class NoSuchAccountError extends Error {}

export async function setOperator(
  nats: Nats,
  accounts: Bucket<unknown>,
  email: string,
  operator: boolean,
  deadlineMs = 10_000,
): Promise<{ account_id: string; operator: boolean }> {
  const index = (await accounts.get(emailIndexKey(email))) as EmailIndex | null;
  const view = index ? ((await accounts.get(index.account_id)) as AccountView | null) : null;
  if (!index || !view) throw new NoSuchAccountError(`no account is registered with ${email}`);
  const ev: AccountEvent = { type: 'operator_set', account_id: view.account_id, operator, at: Date.now() };
  const ack = await nats.js.publish(accountSubject(view.account_id, ev.type), encode(ev));
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const now = (await accounts.get(view.account_id)) as AccountView | null;
    if (now && now.seq >= ack.seq) return { account_id: view.account_id, operator: now.operator === true };
    if (Date.now() > deadline)
      throw new Error(
        `operator_set is stored (ACCOUNTS seq ${ack.seq}) but not projected yet: is the HTTP gateway running?`,
      );
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
