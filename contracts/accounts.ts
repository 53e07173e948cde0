/**
 * Accounts, sessions and API keys: console request bodies, the events on the `ACCOUNTS` stream
 * (the truth) and the records projected from them into KV.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TIERS, type Tier } from './limits.ts';

/** A plan is a tier; Japan access is a separate option of the plan. */
export const Plan = z.enum(TIERS);
export type Plan = Tier;

/** Data-feed scopes (spec "Authentication" §4). */
export const FEED_SCOPES = [
  'chain:hyperliquid',
  'region:us',
  'region:jp',
  'stream:read',
  'status:read',
  'status:admin',
] as const;
/** Simulation/MCP scopes (spec §5). */
export const SIM_SCOPES = ['generate', 'stream', 'metrics', 'mcp'] as const;
export const Scope = z.enum([...FEED_SCOPES, ...SIM_SCOPES]);
export type Scope = z.infer<typeof Scope>;

const text = (max: number) => z.string().trim().min(1).max(max);

/** Where a registration or login came from (a web source, an MCP registry, a campaign…). */
export const Attribution = z
  .object({
    source: text(64).optional(),
    campaign: text(128).optional(),
    referrer: text(512).optional(),
    utm_source: text(128).optional(),
    utm_medium: text(128).optional(),
    utm_campaign: text(128).optional(),
    utm_term: text(128).optional(),
    utm_content: text(128).optional(),
  })
  .strict();
export type Attribution = z.infer<typeof Attribution>;
export const ATTRIBUTION_FIELDS = Object.keys(Attribution.shape) as (keyof Attribution)[];

/** At least 10 characters mixing three of: lower case, upper case, digits, symbols (or 16+ characters). */
export const Password = z
  .string({ error: 'password is required' })
  .min(10, 'at least 10 characters')
  .max(256, 'at most 256 characters')
  .refine(
    (p) => p.length >= 16 || [/[a-z]/, /[A-Z]/, /\d/, /[^A-Za-z0-9]/].filter((r) => r.test(p)).length >= 3,
    {
      message: 'too weak: mix three of lower case, upper case, digits and symbols, or use 16+ characters',
    },
  );

export const Email = z
  .email('not a valid email address')
  .max(254)
  .transform((e) => e.toLowerCase());

/**
 * `plan` and `jp_access` are honoured only where self-service plans are enabled (configuration
 * `SELF_SERVICE_PLANS`); otherwise every account starts on Basic and an operator changes the plan.
 */
export const RegisterBody = Attribution.extend({
  email: Email,
  password: Password,
  plan: Plan.default('basic'),
  jp_access: z.boolean().default(false),
}).strict();
export type RegisterBody = z.infer<typeof RegisterBody>;

/** What every console session token starts with (`mds_` + 24 random bytes, base64url); API keys never do. */
export const SESSION_TOKEN_PREFIX = 'mds_';

export const LoginBody = Attribution.extend({ email: Email, password: z.string().min(1).max(256) }).strict();
export type LoginBody = z.infer<typeof LoginBody>;

/**
 * `expires_at` (ISO 8601, in the future): past it the key answers as a revoked one (`key_expired`).
 * A key with `status:admin` always expires, at most `ADMIN_KEY_MAX_TTL_S` after its creation (that
 * maximum when none is sent).
 */
export const CreateKeyBody = z
  .object({
    name: text(64),
    scopes: z.array(Scope).max(16).default([]),
    expires_at: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

/** `PATCH /api/v1/console/keys/{key_id}`: a new name, new scopes, or both. */
export const UpdateKeyBody = z
  .object({ name: text(64).optional(), scopes: z.array(Scope).max(16).optional() })
  .strict()
  .refine((b) => b.name !== undefined || b.scopes !== undefined, {
    message: 'send name, scopes or both',
  });
export type UpdateKeyBody = z.infer<typeof UpdateKeyBody>;

/** An operator's plan change (`PUT /api/v1/console/accounts/{account_id}/plan`). */
export const SetPlanBody = z.object({ plan: Plan, jp_access: z.boolean().default(false) }).strict();
export type SetPlanBody = z.infer<typeof SetPlanBody>;

/**
 * Active keys one account may hold at once. Checked before a key is published; concurrent creations
 * can overshoot by at most the per-account creation burst (console limits). Key records live apart
 * from the account record, so neither the cap nor an overshoot grows the account record.
 */
export const MAX_ACTIVE_KEYS_PER_ACCOUNT = 25;

export type KeyStatus = 'active' | 'revoked';

/** Events on `acct.<account_id>.<type>`; `at` is Unix ms. Secrets appear only as hashes. */
export type AccountEvent =
  | {
      type: 'registered';
      account_id: string;
      email: string;
      password_hash: string;
      plan: Plan;
      jp_access: boolean;
      attribution: Attribution;
      at: number;
    }
  | {
      type: 'login_recorded';
      account_id: string;
      session_hash: string;
      expires_at: number;
      attribution: Attribution;
      at: number;
    }
  | {
      type: 'logged_out';
      account_id: string;
      session_hash: string;
      /** The same token hashed under previous secret versions: all of them end. */
      previous_hashes?: string[];
      at: number;
    }
  /** A session found under a previous secret version, stored again under the current one. */
  | {
      type: 'session_rehashed';
      account_id: string;
      session_hash: string;
      expires_at: number;
      at: number;
    }
  | {
      type: 'plan_changed';
      account_id: string;
      plan: Plan;
      jp_access: boolean;
      /** The operator's account id. */
      by?: string;
      at: number;
    }
  | {
      type: 'key_created';
      account_id: string;
      key_id: string;
      key_hash: string;
      prefix: string;
      name: string;
      scopes: Scope[];
      /** Unix ms after which the key is refused (`key_expired`); absent: never. */
      expires_at?: number;
      at: number;
    }
  /**
   * A key's new name and scopes (the whole set, not a change). Every gateway hears it on the core
   * subject and stops using its cached copy at once.
   */
  | {
      type: 'key_updated';
      account_id: string;
      key_id: string;
      /** Every hash of the key (current secret version first), so gateways find their cached copies. */
      key_hashes: string[];
      name: string;
      scopes: Scope[];
      at: number;
    }
  /**
   * Operator rights given (`operator: true`) or taken, only by an explicit local act: the
   * `npm run operator -- grant|revoke <email>` command, run with the service's NATS credentials
   * (producers/accounts/operator.ts). Registering an email never makes an operator.
   */
  | { type: 'operator_set'; account_id: string; operator: boolean; at: number }
  /** A key found under a previous secret version, stored again under the current one. */
  | { type: 'key_rehashed'; account_id: string; key_id: string; key_hash: string; at: number }
  | {
      type: 'key_revoked';
      account_id: string;
      key_id: string;
      key_hash: string;
      /** The key's hashes under other secret versions: every gateway forgets them all. */
      previous_hashes?: string[];
      at: number;
    };
export type AccountEventType = AccountEvent['type'];

/**
 * Every projected record carries `seq`: the `ACCOUNTS` stream sequence of the last event applied
 * to it. A projector writes a record only over an older one, so replays never move it backwards.
 */
export type Projected = { seq: number };

/** KV `keys`, keyed by the key's HMAC: everything the edge guard needs, nothing secret. */
export type KeyRecord = Projected & {
  key_id: string;
  key_hash: string;
  account_id: string;
  tier: Tier;
  jp_access: boolean;
  scopes: Scope[];
  status: KeyStatus;
  /** Unix ms after which the key answers as revoked (`key_expired`); null or absent: never. */
  expires_at?: number | null;
};

/** Whether a key record is past its expiry at `now` (Unix ms). */
export const keyExpired = (rec: { expires_at?: number | null }, now: number): boolean =>
  rec.expires_at != null && rec.expires_at <= now;

/** Default longest life of a key with `status:admin` (configuration `ADMIN_KEY_MAX_TTL_S`), ms: 30 days. */
export const ADMIN_KEY_MAX_TTL_MS = 30 * 86_400_000;

/** KV `accounts`, keyed by account id: what the console shows. Bounded: keys live apart. */
export type AccountView = Projected & {
  account_id: string;
  email: string;
  password_hash: string;
  plan: Plan;
  jp_access: boolean;
  created_at: number;
  attribution: Attribution;
  logins: { at: number; attribution: Attribution }[];
  /** Operator rights (plans, `status:admin` keys, maintenance), set only by `operator_set`; absent: none. */
  operator?: boolean;
};

/** KV `accounts`, key `email.<sha256>`: the email's owner; `claimed_at` (Unix ms) while unconfirmed. */
export type EmailIndex = Partial<Projected> & { account_id: string; claimed_at?: number };

/** KV `account_keys`, key `<account_id>.<key_id>`: one record per key, for the console. */
export type AccountKeyRecord = Projected & {
  key_id: string;
  account_id: string;
  /** HMACs of the key (current secret version first): not secret, never shown; revocation needs them. */
  key_hashes: string[];
  name: string;
  prefix: string;
  scopes: Scope[];
  created_at: number;
  status: KeyStatus;
  revoked_at: number | null;
  /** Unix ms after which the key is refused; null or absent: never. */
  expires_at?: number | null;
};

/** KV `sessions`, keyed by the session token's hash; `ended` marks a logout (kept so replays cannot revive it). */
export type SessionRecord = Projected & { account_id: string; expires_at: number; ended?: boolean };

/** NATS subject of an account event. */
export const accountSubject = (accountId: string, type: AccountEventType): string =>
  `acct.${accountId}.${type}`;
/** Every account event (one filter subject, nats-server 2.9). */
export const ACCOUNT_EVENTS_ALL = 'acct.>';
/** Every event of one account. */
export const accountEventsOf = (accountId: string): string => `acct.${accountId}.*`;

/** Logins kept per account view (the stream keeps them all). */
export const LOGINS_KEPT = 50;

/** KV `accounts` key of the email index (a hash keeps it a valid KV key, and the email out of it). */
export const emailIndexKey = (email: string): string =>
  `email.${createHash('sha256').update(email.toLowerCase()).digest('hex')}`;

/** KV `accounts` key of the account projection's stored position (`{seq}`: every event up to it is projected). */
export const PROJECTION_POSITION_KEY = 'projection.position';

/** KV `account_keys` key of one key's console record; `<account_id>.>` lists an account's keys. */
export const accountKeyKey = (accountId: string, keyId: string): string => `${accountId}.${keyId}`;
