/**
 * The events of one account as they happen: a core NATS subscription on the account's subjects of
 * the `ACCOUNTS` stream (the events that also revoke keys on every gateway). For what a console
 * session opened and must end when the account says so (logout, plan change).
 * `ready` resolves once the server has the subscription, so no event published after it is
 * missed; callers check the account after `ready` (what came before is in the projections).
 * After a NATS reconnect events may have been missed: `onReconnect` runs, to check again.
 */
import { type AccountEvent, accountEventsOf } from '../../contracts/accounts.ts';
import { decode } from '../../platform/msgpack.ts';
import type { Nats } from '../../platform/nats.ts';

export type AccountWatch = { ready: Promise<void>; stop(): void };

export type AccountListener = { event(ev: AccountEvent): void; reconnected(): void };

export function watchAccount(nats: Nats, accountId: string, listener: AccountListener): AccountWatch {
  const sub = nats.nc.subscribe(accountEventsOf(accountId), {
    callback: (err, msg) => {
      if (err) return;
      let ev: AccountEvent;
      try {
        ev = decode<AccountEvent>(msg.data);
      } catch {
        return; // not an account event: nothing to act on
      }
      listener.event(ev);
    },
  });
  const offReconnect = nats.onReconnect(() => listener.reconnected());
  return {
    ready: nats.nc.flush(),
    stop() {
      offReconnect();
      sub.unsubscribe();
    },
  };
}
