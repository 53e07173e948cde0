/**
 * Account events → KV writes. Pure: the same events in the same order give the same writes,
 * which is what makes the projections rebuildable from the `ACCOUNTS` stream.
 */
import {
  type AccountEvent,
  type AccountView,
  type KeyRecord,
  LOGINS_KEPT,
  type SessionRecord,
} from '../../contracts/accounts.ts';
import { sha256Hex } from '../../platform/secrets.ts';

export type KvWrite =
  | { bucket: 'keys'; key: string; value: KeyRecord }
  | { bucket: 'accounts'; key: string; value: AccountView | { account_id: string } }
  | { bucket: 'sessions'; key: string; value: SessionRecord | null };

export type AccountsState = { accounts: Map<string, AccountView> };

export const emptyState = (): AccountsState => ({ accounts: new Map() });

/** KV key of the email index (the hash keeps it a valid KV key). */
export const emailIndexKey = (email: string): string => `email.${sha256Hex(email.toLowerCase())}`;

function keyWrite(view: AccountView, k: AccountView['keys'][number]): KvWrite {
  const value: KeyRecord = {
    key_id: k.key_id,
    key_hash: k.key_hash,
    account_id: view.account_id,
    tier: view.plan,
    jp_access: view.jp_access,
    scopes: k.scopes,
    status: k.status,
  };
  return { bucket: 'keys', key: k.key_hash, value };
}

export function applyAccountEvent(state: AccountsState, ev: AccountEvent): KvWrite[] {
  if (ev.type === 'registered') {
    const view: AccountView = {
      account_id: ev.account_id,
      email: ev.email,
      password_hash: ev.password_hash,
      plan: ev.plan,
      jp_access: ev.jp_access,
      created_at: ev.at,
      attribution: ev.attribution,
      logins: [],
      keys: [],
    };
    state.accounts.set(ev.account_id, view);
    return [
      { bucket: 'accounts', key: ev.account_id, value: view },
      { bucket: 'accounts', key: emailIndexKey(ev.email), value: { account_id: ev.account_id } },
    ];
  }
  const view = state.accounts.get(ev.account_id);
  if (!view) return []; // an event for an account this stream never registered: ignored
  const saveView: KvWrite = { bucket: 'accounts', key: view.account_id, value: view };
  switch (ev.type) {
    case 'login_recorded':
      view.logins = [...view.logins, { at: ev.at, attribution: ev.attribution }].slice(-LOGINS_KEPT);
      return [
        saveView,
        {
          bucket: 'sessions',
          key: ev.session_hash,
          value: { account_id: ev.account_id, expires_at: ev.expires_at },
        },
      ];
    case 'logged_out':
      return [{ bucket: 'sessions', key: ev.session_hash, value: null }];
    case 'plan_changed': {
      view.plan = ev.plan;
      view.jp_access = ev.jp_access;
      return [saveView, ...view.keys.map((k) => keyWrite(view, k))];
    }
    case 'key_created': {
      const k = {
        key_id: ev.key_id,
        key_hash: ev.key_hash,
        name: ev.name,
        prefix: ev.prefix,
        scopes: ev.scopes,
        created_at: ev.at,
        status: 'active' as const,
        revoked_at: null,
      };
      view.keys = [...view.keys, k];
      return [saveView, keyWrite(view, k)];
    }
    case 'key_revoked': {
      view.keys = view.keys.map((k) =>
        k.key_id === ev.key_id && k.status === 'active' ? { ...k, status: 'revoked', revoked_at: ev.at } : k,
      );
      const k = view.keys.find((x) => x.key_id === ev.key_id);
      return k ? [saveView, keyWrite(view, k)] : [];
    }
  }
}
