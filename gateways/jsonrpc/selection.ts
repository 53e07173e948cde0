/**
 * What a call names (coins, event types, sources) as a Selection, through the subscription core
 * (gateways/core/subscribe.ts) like every transport: coins resolved against the platform's feed
 * and the caller's own account, sources within the key's `chain:*` scopes (-32002 beyond), the
 * caller's own events visible. A JSON-RPC answer has no room for a warning, so any coin the feed
 * does not track is -32003 here, where a stream would go on for the others. The calls of one request
 * share its budget (request-budget.ts): coins named across them are bounded, and the caller's own
 * coins are read from JetStream once for all of them.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Subscription } from '../../contracts/subscription.ts';
import type { Selection } from '../core/selection.ts';
import { type Subscribed, subscribe } from '../core/subscribe.ts';
import type { CallContext, EdgeDeps } from './context.ts';
import { budgetOf } from './request-budget.ts';

export async function selectionOf(
  deps: EdgeDeps,
  request: Subscription,
  ctx: CallContext,
): Promise<Subscribed> {
  const budget = budgetOf(deps.nats, ctx);
  budget.takeCoins(request.coins?.length ?? 0);
  const subscribed = await subscribe(deps, request, ctx.principal, budget.subscribeOptions);
  const unknown = subscribed.warnings.map((w) => w.coin);
  if (unknown.length > 0)
    throw new ApiError('coin_not_found', `not tracked: ${unknown.join(', ')}`, { coins: unknown });
  return subscribed;
}

/** The one coin of a selection made for one coin (its tracked spelling). */
export const onlyCoin = (s: Selection): string => [...(s.coins ?? [])][0] as string;
