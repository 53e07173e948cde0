/**
 * Accounts, sessions and API keys: console request bodies, the events on the `ACCOUNTS` stream
 * (the truth) and the records projected from them into KV.
 */
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

export const RegisterBody = Attribution.extend({
  email: Email,
  password: Password,
  plan: Plan,
  jp_access: z.boolean().default(false),
}).strict();
export type RegisterBody = z.infer<typeof RegisterBody>;

export const LoginBody = Attribution.extend({ email: Email, password: z.string().min(1).max(256) }).strict();
export type LoginBody = z.infer<typeof LoginBody>;

export const CreateKeyBody = z
  .object({ name: text(64), scopes: z.array(Scope).max(16).default([]) })
  .strict();
export type CreateKeyBody = z.infer<typeof CreateKeyBody>;

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
  | { type: 'logged_out'; account_id: string; session_hash: string; at: number }
  | { type: 'plan_changed'; account_id: string; plan: Plan; jp_access: boolean; at: number }
  | {
      type: 'key_created';
      account_id: string;
      key_id: string;
      key_hash: string;
      prefix: string;
      name: string;
      scopes: Scope[];
      at: number;
    }
  | { type: 'key_revoked'; account_id: string; key_id: string; key_hash: string; at: number };
export type AccountEventType = AccountEvent['type'];

/** KV `keys`, keyed by the key's HMAC: everything the edge guard needs, nothing secret. */
export type KeyRecord = {
  key_id: string;
  key_hash: string;
  account_id: string;
  tier: Tier;
  jp_access: boolean;
  scopes: Scope[];
  status: KeyStatus;
};

/** KV `accounts`, keyed by account id: what the console shows. */
export type AccountView = {
  account_id: string;
  email: string;
  password_hash: string;
  plan: Plan;
  jp_access: boolean;
  created_at: number;
  attribution: Attribution;
  logins: { at: number; attribution: Attribution }[];
  /** `key_hash` is the HMAC (not secret, never shown): revocation needs it. */
  keys: {
    key_id: string;
    key_hash: string;
    name: string;
    prefix: string;
    scopes: Scope[];
    created_at: number;
    status: KeyStatus;
    revoked_at: number | null;
  }[];
};

/** KV `sessions`, keyed by the session token's hash. */
export type SessionRecord = { account_id: string; expires_at: number };

/** Logins kept per account view (the stream keeps them all). */
export const LOGINS_KEPT = 50;
