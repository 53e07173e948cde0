/**
 * Account events → KV writes. Pure: the same events in the same order give the same writes,
 * which is what makes the projections rebuildable from the `ACCOUNTS` stream.
 *
 * Every written value carries the `seq` of the event that produced it, and the projector writes a
 * record only over an older one (see platform/kv-conditional-write.ts): a record never moves backwards, however
 * many projectors replay the stream. Nothing is ever deleted: a logout writes an `ended` session, a
 * revocation a `revoked` key, so a replayed login or key creation finds a newer record and stops.
 *
 * Bounded records: the account record holds the profile and the last `LOGINS_KEPT` logins; each key
 * has its own record (`account_keys`), so the account record does not grow with keys. The state
 * kept in memory holds only active keys per account, and may be read back from the records
 * (hydrate.ts): an account view's change is then skipped for an event at or below the view's `seq`
 * (it holds it already), and the other changes converge as the replay goes on (a record is only
 * ever written over an older one).
 */
import {
  type AccountEvent,
  type AccountKeyRecord,
  type AccountView,
  accountKeyKey,
  type EmailIndex,
  emailIndexKey,
  type KeyRecord,
  LOGINS_KEPT,
  type Projected,
  type Scope,
  type SessionRecord,
} from '../../contracts/accounts.ts';

export type KvWrite =
  | { bucket: 'keys'; key: string; value: KeyRecord }
  | { bucket: 'accounts'; key: string; value: AccountView | (EmailIndex & Projected) }
  | { bucket: 'accountKeys'; key: string; value: AccountKeyRecord }
  /** `onlyIfAbsent`: a rehash must never overwrite the `ended` record a logout left. */
  | { bucket: 'sessions'; key: string; value: SessionRecord; onlyIfAbsent?: boolean };

/** An active key as the reducer remembers it (revoked keys are forgotten: their records say so). */
export type ActiveKey = {
  key_id: string;
  /** Current secret version first. */
  hashes: string[];
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: number;
  /** Unix ms after which the key is refused; null or absent: never. */
  expires_at?: number | null;
};

export type AccountState = { view: AccountView; keys: Map<string, ActiveKey> };

export type AccountsState = { accounts: Map<string, AccountState> };

export const emptyState = (): AccountsState => ({ accounts: new Map() });

export { accountKeyKey, emailIndexKey };

/** A key's hashes kept at most (one per secret version still in use). */
const HASHES_KEPT = 4;

function keyRecords(
  view: AccountView,
  k: ActiveKey,
  seq: number,
  status: 'active' | 'revoked' = 'active',
  revokedAt: number | null = null,
): KvWrite[] {
  const edge = (hash: string): KvWrite => ({
    bucket: 'keys',
    key: hash,
    value: {
      key_id: k.key_id,
      key_hash: hash,
      account_id: view.account_id,
      tier: view.plan,
      jp_access: view.jp_access,
      scopes: k.scopes,
      status,
      expires_at: k.expires_at ?? null,
      seq,
    },
  });
  const consoleRecord: KvWrite = {
    bucket: 'accountKeys',
    key: accountKeyKey(view.account_id, k.key_id),
    value: {
      key_id: k.key_id,
      account_id: view.account_id,
      key_hashes: k.hashes,
      name: k.name,
      prefix: k.prefix,
      scopes: k.scopes,
      created_at: k.created_at,
      status,
      revoked_at: revokedAt,
      expires_at: k.expires_at ?? null,
      seq,
    },
  };
  return [...k.hashes.map(edge), consoleRecord];
}

/** The writes of event `ev`, stored at stream sequence `seq`. */
export function applyAccountEvent(state: AccountsState, ev: AccountEvent, seq: number): KvWrite[] {
  if (ev.type === 'registered') {
    if (state.accounts.has(ev.account_id)) return []; // registered once; a repeat changes nothing
    const view: AccountView = {
      account_id: ev.account_id,
      email: ev.email,
      password_hash: ev.password_hash,
      plan: ev.plan,
      jp_access: ev.jp_access,
      created_at: ev.at,
      attribution: ev.attribution,
      logins: [],
      seq,
    };
    state.accounts.set(ev.account_id, { view, keys: new Map() });
    return [
      { bucket: 'accounts', key: ev.account_id, value: view },
      { bucket: 'accounts', key: emailIndexKey(ev.email), value: { account_id: ev.account_id, seq } },
    ];
  }
  const account = state.accounts.get(ev.account_id);
  if (!account) return []; // an event for an account this stream never registered: ignored
  const { view } = account;
  const saveView = (): KvWrite => {
    view.seq = seq;
    return { bucket: 'accounts', key: view.account_id, value: { ...view } };
  };
  // A view read back from KV (hydrate.ts) may already hold this event: its change is not made twice.
  const viewHas = seq <= view.seq;
  switch (ev.type) {
    case 'login_recorded':
      if (!viewHas)
        view.logins = [...view.logins, { at: ev.at, attribution: ev.attribution }].slice(-LOGINS_KEPT);
      return [
        ...(viewHas ? [] : [saveView()]),
        {
          bucket: 'sessions',
          key: ev.session_hash,
          value: { account_id: ev.account_id, expires_at: ev.expires_at, seq },
        },
      ];
    case 'session_rehashed':
      return [
        {
          bucket: 'sessions',
          key: ev.session_hash,
          value: { account_id: ev.account_id, expires_at: ev.expires_at, seq },
          onlyIfAbsent: true,
        },
      ];
    case 'logged_out':
      return [ev.session_hash, ...(ev.previous_hashes ?? [])].map((hash) => ({
        bucket: 'sessions',
        key: hash,
        value: { account_id: ev.account_id, expires_at: 0, ended: true, seq },
      }));
    case 'plan_changed': {
      if (viewHas) return [];
      view.plan = ev.plan;
      view.jp_access = ev.jp_access;
      const save = saveView();
      return [save, ...[...account.keys.values()].flatMap((k) => keyRecords(view, k, seq))];
    }
    case 'operator_set':
      view.operator = ev.operator;
      return [saveView()];
    case 'key_created': {
      if (account.keys.has(ev.key_id)) return [];
      const k: ActiveKey = {
        key_id: ev.key_id,
        hashes: [ev.key_hash],
        name: ev.name,
        prefix: ev.prefix,
        scopes: ev.scopes,
        created_at: ev.at,
        expires_at: ev.expires_at ?? null,
      };
      account.keys.set(k.key_id, k);
      return keyRecords(view, k, seq);
    }
    case 'key_updated': {
      const k = account.keys.get(ev.key_id);
      if (!k) return []; // unknown or revoked: a revoked key keeps its last name and scopes
      k.name = ev.name;
      k.scopes = ev.scopes;
      return keyRecords(view, k, seq);
    }
    case 'key_rehashed': {
      const k = account.keys.get(ev.key_id);
      if (!k || k.hashes.includes(ev.key_hash)) return [];
      k.hashes = [ev.key_hash, ...k.hashes].slice(0, HASHES_KEPT);
      return keyRecords(view, k, seq);
    }
    case 'key_revoked': {
      const k = account.keys.get(ev.key_id);
      if (!k) return []; // unknown or already revoked: its record already says so
      account.keys.delete(ev.key_id);
      return keyRecords(view, k, seq, 'revoked', ev.at);
    }
  }
}
