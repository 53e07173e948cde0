/**
 * What a call names (coins, event types, sources) as a Selection, through the subscription core
 * (gateways/core/subscribe.ts) like every transport: coins resolved against the platform's feed
 * and the caller's own account, sources within the key's `chain:*` scopes (-32002 beyond), the
 * caller's own events visible. A JSON-RPC answer has no room for a warning, so any coin the feed
 * does not track is -32003 here, where a stream would go on for the others.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Subscription } from '../../contracts/subscription.ts';
import type { Principal } from '../core/guard.ts';
import type { Selection } from '../core/selection.ts';
import { type Subscribed, subscribe } from '../core/subscribe.ts';
import type { EdgeDeps } from './context.ts';

export async function selectionOf(
  deps: EdgeDeps,
  request: Subscription,
  principal: Principal,
): Promise<Subscribed> {
  const subscribed = await subscribe(deps, request, principal);
  const unknown = subscribed.warnings.map((w) => w.coin);
  if (unknown.length > 0)
    throw new ApiError('coin_not_found', `not tracked: ${unknown.join(', ')}`, { coins: unknown });
  return subscribed;
}

/** The one coin of a selection made for one coin (its tracked spelling). */
export const onlyCoin = (s: Selection): string => [...(s.coins ?? [])][0] as string;
