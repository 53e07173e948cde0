/**
 * Who may do what, given a key record. Pure. Rules (spec "Authentication" and "Limits"):
 * - tiers gate transports: JSON-RPC all; gRPC and the unified stream Pro and above; disk-sync Quant;
 * - a JP gateway needs a plan with Japan access;
 * - a key with no scopes has everything its tier allows (but `status:admin`, never implied); a key
 *   with scopes has only their union:
 *   it needs the capability the surface asks for (`stream:read`, `generate`, …), and its `region:*`
 *   scopes, when it has any, must include the gateway's region; `chain:*` scopes restrict the sources.
 * - `{base_url}` (the simulation service) is in no region (`region: null`): `region:*` scopes are
 *   data-feed scopes and say nothing about it; tiers gate only the live-data transports.
 */
import type { KeyRecord, Scope } from '../../contracts/accounts.ts';
import { BASIC_SIMULATION_STREAMS } from '../../contracts/base-url-limits.ts';
import { ApiError } from '../../contracts/errors.ts';
import { TIER_LIMITS, type Tier, type Transport, tierAllows } from '../../contracts/limits.ts';
import type { Surface } from './guard.ts';
import { holdsScope } from './scopes.ts';

export type Access = { surface: Surface; region: 'us' | 'jp' | null; capability: Scope | null };

/** Sources the key may read (null = all). */
export type Grant = { sources: ReadonlySet<string> | null };

const TRANSPORT_OF: Partial<Record<Surface, Transport>> = {
  unified: 'unified',
  jsonrpc: 'jsonrpc',
  grpc: 'grpc',
  disksync: 'disksync',
};

/** The live-data transport behind a surface, or null (`simulation`): tier caps apply to these only. */
export function liveDataTransport(surface: Surface): Transport | null {
  return TRANSPORT_OF[surface] ?? null;
}
/**
 * The concurrent-stream cap of a key of `tier` on `surface`: every stream counts in one cap per
 * key; a `{base_url}` stream (`/stream/live`) may use at least BASIC_SIMULATION_STREAMS of it,
 * so a Basic key (no live-data stream transport, cap 0) may still watch the simulation.
 */
export function streamCap(tier: Tier, surface: Surface): number {
  const cap = TIER_LIMITS[tier].concurrentStreams;
  return liveDataTransport(surface) === null ? Math.max(cap, BASIC_SIMULATION_STREAMS) : cap;
}
const TIER_NEEDED: Record<Transport, string> = {
  jsonrpc: 'any tier',
  grpc: 'Pro or Quant',
  unified: 'Pro or Quant',
  disksync: 'Quant',
};

export function authorize(rec: KeyRecord, access: Access): Grant {
  const transport = TRANSPORT_OF[access.surface];
  if (transport && !tierAllows(rec.tier, transport)) {
    throw new ApiError(
      'tier_restricted',
      `the ${access.surface} transport needs ${TIER_NEEDED[transport]}; this key's plan is ${rec.tier}`,
    );
  }
  if (access.region === 'jp' && !rec.jp_access)
    throw new ApiError('tier_restricted', 'JP endpoints need a plan with Japan access');
  if (!holdsScope(rec.scopes, access.capability))
    throw new ApiError('forbidden', `this key lacks the ${access.capability} scope`);
  if (rec.scopes.length === 0) return { sources: null };
  const scopes = new Set<string>(rec.scopes);
  const regions = rec.scopes.filter((s) => s.startsWith('region:'));
  if (access.region !== null && regions.length > 0 && !scopes.has(`region:${access.region}`))
    throw new ApiError('forbidden', `this key is limited to ${regions.join(', ')}`);
  const chains = rec.scopes.filter((s) => s.startsWith('chain:')).map((s) => s.slice('chain:'.length));
  return { sources: chains.length > 0 ? new Set(chains) : null };
}
