/**
 * Coins and sources a JSON-RPC call may name. A coin is tracked when the platform's feed knows it
 * (exact spelling first, then upper case), or when the caller's own account has published it; any
 * other is -32003, exactly as if it did not exist. Sources are those the key's `chain:*` scopes
 * allow; naming another is -32002.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Principal } from '../core/guard.ts';
import { ownsCoin } from '../core/own-coins.ts';
import { viewerOf } from '../core/visibility.ts';
import type { EdgeDeps } from './context.ts';

/** The platform's spelling of a coin it tracks, or null. */
export function platformCoin(deps: EdgeDeps, coin: string): string | null {
  for (const spelling of [coin, coin.toUpperCase()])
    if (deps.tail.health.knows(spelling) || deps.latest.sourcesOf(spelling).size > 0) return spelling;
  return null;
}

/** The tracked spelling of `coin` for this caller (the platform's, or its own account's); -32003 otherwise. */
export async function trackedCoin(deps: EdgeDeps, coin: string, principal: Principal): Promise<string> {
  const known = platformCoin(deps, coin);
  if (known) return known;
  for (const spelling of new Set([coin, coin.toUpperCase()]))
    if (await ownsCoin(deps.nats, viewerOf(principal), spelling)) return spelling;
  throw new ApiError('coin_not_found', `coin ${coin} is not tracked`, { coin });
}

/** The requested sources within what the key may read (null: any); asking for more is -32002. */
export function readableSources(
  requested: readonly string[] | null,
  principal: Principal,
): ReadonlySet<string> | null {
  const allowed = principal.sources;
  if (!allowed) return requested ? new Set(requested) : null;
  if (!requested) return allowed;
  const outside = requested.filter((s) => !allowed.has(s));
  if (outside.length > 0)
    throw new ApiError('forbidden', `this key is limited to sources ${[...allowed].join(', ')}`);
  return new Set(requested);
}
