/**
 * Whether a principal holds a capability, for operations that choose their scope after the edge
 * guard has admitted the request (one endpoint, many operations: `tools/call` picks the tool's
 * scope). Same rule as the guard (`authorize.ts`, spec "Authentication" §4): a key without scopes
 * has everything its tier allows but `status:admin`; a key with scopes has only their union. Pure.
 *
 * Market data is read under one scope on every transport (`MARKET_DATA_SCOPE`): the unified stream,
 * disk-sync, gRPC (streams and unary calls) and JSON-RPC (every method, filters included). A key
 * with scopes but without it (a `metrics` key, a `status:read` key) reads no market data; `chain:*`
 * and `region:*` only narrow what it reads.
 */
import type { Scope } from '../../contracts/accounts.ts';
import { ApiError } from '../../contracts/errors.ts';
import { OPERATOR_ONLY_SCOPES } from '../../contracts/status.ts';
import type { Principal } from './guard.ts';

/** The scope every market-data read needs when the key has scopes (spec "Authentication" §4). */
export const MARKET_DATA_SCOPE: Scope = 'stream:read';

export function holdsScope(scopes: readonly Scope[], capability: Scope | null): boolean {
  if (capability === null || scopes.includes(capability)) return true;
  return scopes.length === 0 && !OPERATOR_ONLY_SCOPES.has(capability);
}

/** Throws 403 `forbidden` unless `principal` holds `capability` (null: any admitted key). */
export function requireScope(principal: Pick<Principal, 'scopes'> | null, capability: Scope | null): void {
  if (capability === null) return;
  if (!principal || !holdsScope(principal.scopes, capability))
    throw new ApiError('forbidden', `this key lacks the ${capability} scope`);
}
