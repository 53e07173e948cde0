/** Shapes of the console's answers, for the OpenAPI document (the requests' schemas are in contracts/accounts.ts). */
import { z } from 'zod';
import { Attribution, Plan, Scope } from '../../contracts/accounts.ts';

export const CONSOLE_BASE = '/api/v1/console';

/** A Unix-ms time as the console shows it (ISO 8601), or null. */
export const iso = (ms: number | null | undefined) => (ms ? new Date(ms).toISOString() : null);

const Time = z.iso.datetime();

export const RegisteredResponse = z.object({ account_id: z.string(), plan: Plan, jp_access: z.boolean() });
export const LoginResponse = z.object({ session_token: z.string(), expires_at: Time });
export const CookieSessionResponse = z.object({
  account_id: z.string(),
  expires_at: Time.nullable(),
  csrf_token: z.string().describe('send as x-csrf-token on every state-changing request of this session'),
});

export const KeyView = z.object({
  key_id: z.string(),
  name: z.string(),
  prefix: z.string(),
  tier: Plan,
  scopes: z.array(Scope),
  status: z.enum(['active', 'revoked']),
  created_at: Time,
  last_used_at: Time.nullable(),
  revoked_at: Time.nullable(),
  /** Past it the key answers as revoked (`key_expired`); null: never. */
  expires_at: Time.nullable(),
});
export const KeyList = z.object({ keys: z.array(KeyView) });
export const CreatedKeyResponse = z.object({
  key_id: z.string(),
  key: z.string().describe('the API key in clear: shown in this answer only'),
  name: z.string(),
  prefix: z.string(),
  tier: Plan,
  scopes: z.array(Scope),
  created_at: Time,
  expires_at: Time.nullable(),
  note: z.string(),
});
export const UpdatedKeyResponse = KeyView.omit({
  last_used_at: true,
  revoked_at: true,
  created_at: true,
  expires_at: true,
});

export const AccountResponse = z.object({
  account_id: z.string(),
  email: z.string(),
  plan: Plan,
  jp_access: z.boolean(),
  regions: z.array(z.enum(['us', 'jp'])),
  created_at: Time.nullable(),
  attribution: Attribution,
  logins: z.array(z.object({ at: Time.nullable(), attribution: Attribution })),
});
export const PlanResponse = RegisteredResponse;
