/**
 * Polling filters in the EVM manner: `md_newFilter [{coins, event_types, sources}]` → a filter id;
 * `md_getFilterChanges [id]` → the events stored since the previous poll (each with its `seq`, in
 * stream order, at most `filterMaxEvents`: the rest come with the next poll); `md_uninstallFilter
 * [id]` → whether there was one. A filter starts after the newest event at its creation, belongs to
 * the key that made it, and sees the platform's feed plus that key's own account's events. Its
 * cursor is in KV (filter-store.ts), so any replica answers the next poll with no gap and no
 * duplicate. At most the tier's subscription cap of live filters per key (-32005 beyond).
 */

import type { ParamsOf } from '../../../contracts/jsonrpc.ts';
import { TIER_LIMITS } from '../../../contracts/limits.ts';
import type { Principal } from '../../core/guard.ts';
import { eventsAfter } from '../../core/log-range.ts';
import type { Selection } from '../../core/selection.ts';
import { viewerOf } from '../../core/visibility.ts';
import { readableSources, trackedCoin } from '../coins.ts';
import { type CallContext, type EdgeDeps, type Json, toJson } from '../context.ts';
import type { StoredFilter } from '../filter-store.ts';

/** Filters of the open guard (benchmarks) belong to no key: they share one owner. */
const keyOf = (p: Principal): string => p.keyId ?? 'open';

const setOf = (xs: readonly string[] | null): ReadonlySet<string> | null => (xs ? new Set(xs) : null);

/** What a stored filter selects now: its sources narrowed to what the key may still read. */
function selectionOf(f: StoredFilter, principal: Principal): Selection {
  const allowed = principal.sources;
  const sources =
    f.sources && allowed
      ? f.sources.filter((s) => allowed.has(s))
      : (f.sources ?? (allowed ? [...allowed] : null));
  return {
    coins: setOf(f.coins),
    eventTypes: setOf(f.event_types),
    sources: setOf(sources),
    viewer: f.viewer,
  };
}

export function filterMethods(deps: EdgeDeps) {
  return {
    md_newFilter: async (p: ParamsOf<'md_newFilter'>, ctx: CallContext): Promise<Json> => {
      const { principal } = ctx;
      const coins = p.filter.coins
        ? [...new Set(await Promise.all(p.filter.coins.map((c) => trackedCoin(deps, c, principal))))]
        : null;
      const sources = readableSources(p.filter.sources ?? null, principal);
      const id = await deps.filters.install(keyOf(principal), TIER_LIMITS[principal.tier].subscriptions, {
        coins,
        event_types: p.filter.event_types ?? null,
        sources: sources ? [...sources] : null,
        viewer: viewerOf(principal),
        cursor: deps.tail.lastSeq,
      });
      return toJson(id);
    },

    md_getFilterChanges: async (p: ParamsOf<'md_getFilterChanges'>, ctx: CallContext): Promise<Json> => {
      const events = await deps.filters.poll(keyOf(ctx.principal), p.filter_id, (f) =>
        eventsAfter(deps, selectionOf(f, ctx.principal), f.cursor, deps.settings.filterMaxEvents, ctx.signal),
      );
      return `[${events.map((e) => e.json).join(',')}]` as Json;
    },

    md_uninstallFilter: async (p: ParamsOf<'md_uninstallFilter'>, ctx: CallContext): Promise<Json> =>
      toJson(await deps.filters.uninstall(keyOf(ctx.principal), p.filter_id)),
  };
}
