/**
 * Polling filters in the EVM manner: `md_newFilter [{coins, event_types, sources, last_event_id}]`
 * → a filter id; `md_getFilterChanges [id]` → the events stored since the previous poll (each with
 * its `seq`, in stream order, at most `filterMaxEvents` and what the request's answer still has
 * room for (request-budget.ts): the rest come with the next poll);
 * `md_uninstallFilter [id]` → whether there was one. A filter starts after the newest event at its
 * creation (or after `last_event_id`, which must still be retained: -32008 otherwise), belongs to
 * the key that made it, and sees the platform's feed plus that key's own account's events. Its
 * cursor is in KV (filter-store.ts), so any replica answers the next poll with no gap and no
 * duplicate. At most the tier's subscription cap of live filters per key (-32005 beyond).
 */
import { ApiError } from '../../../contracts/errors.ts';
import type { ParamsOf } from '../../../contracts/jsonrpc.ts';
import { TIER_LIMITS } from '../../../contracts/limits.ts';
import { STREAMS } from '../../../contracts/streams.ts';
import { isDerivedSelection } from '../../core/derived-feed.ts';
import type { Principal } from '../../core/guard.ts';
import { eventsAfter } from '../../core/log-range.ts';
import type { Selection } from '../../core/selection.ts';
import { type CallContext, type EdgeDeps, type Json, toJson } from '../context.ts';
import type { StoredFilter } from '../filter-store.ts';
import { answerFull, budgetOf } from '../request-budget.ts';
import { selectionOf } from '../selection.ts';

/** Filters of the open guard (benchmarks) belong to no key: they share one owner. */
const keyOf = (p: Principal): string => p.keyId ?? 'open';

const listOf = (s: ReadonlySet<string> | null): string[] | null => (s ? [...s] : null);
const setOf = (xs: readonly string[] | null): ReadonlySet<string> | null => (xs ? new Set(xs) : null);

/** What a stored filter selects now: its sources narrowed to what the key may still read. */
function storedSelection(f: StoredFilter, principal: Principal): Selection {
  const allowed = principal.sources;
  const sources = allowed ? (f.sources ?? [...allowed]).filter((s) => allowed.has(s)) : f.sources;
  return {
    coins: setOf(f.coins),
    eventTypes: setOf(f.event_types),
    sources: setOf(sources),
    viewer: f.viewer,
  };
}

export function filterMethods(deps: EdgeDeps) {
  /** Where a new filter starts: after `lastEventId` when it is still retained, else after the newest event. */
  async function startAfter(lastEventId: number | null): Promise<number> {
    if (lastEventId === null) return deps.tail.lastSeq;
    const { first_seq } = (await deps.nats.jsm.streams.info(STREAMS.MD)).state;
    if (lastEventId + 1 < first_seq)
      throw new ApiError('invalid_time_range', `events after ${lastEventId} are no longer retained`, {
        last_event_id: lastEventId,
        first_seq,
      });
    return lastEventId;
  }

  return {
    md_newFilter: async (p: ParamsOf<'md_newFilter'>, ctx: CallContext): Promise<Json> => {
      const { principal } = ctx;
      const { selection, lastEventId } = await selectionOf(deps, p.filter, ctx);
      if (isDerivedSelection(selection))
        throw new ApiError('invalid_params', 'filters follow trades and books; bars are read with md_ohlcv');
      const id = await deps.filters.install(keyOf(principal), TIER_LIMITS[principal.tier].subscriptions, {
        coins: listOf(selection.coins),
        event_types: listOf(selection.eventTypes),
        sources: listOf(selection.sources),
        viewer: selection.viewer ?? null,
        cursor: await startAfter(lastEventId),
      });
      return toJson(id);
    },

    md_getFilterChanges: async (p: ParamsOf<'md_getFilterChanges'>, ctx: CallContext): Promise<Json> => {
      const budget = budgetOf(deps.nats, ctx);
      const events = await deps.filters.poll(keyOf(ctx.principal), p.filter_id, async (f) => {
        // Within the room left in the request's answer; what is left out comes with the next poll.
        const room = budget.room(deps.settings.filterMaxEvents);
        const read = await eventsAfter(deps, storedSelection(f, ctx.principal), f.cursor, room, ctx.signal);
        const kept = budget.keep(read.events);
        if (kept.length === read.events.length) return read;
        // Nothing fits: an empty answer would read as "no new events".
        if (kept.length === 0) throw answerFull();
        return { events: kept, reached: kept.at(-1)?.seq ?? f.cursor };
      });
      return `[${events.map((e) => e.json).join(',')}]` as Json;
    },

    md_uninstallFilter: async (p: ParamsOf<'md_uninstallFilter'>, ctx: CallContext): Promise<Json> =>
      toJson(await deps.filters.uninstall(keyOf(ctx.principal), p.filter_id)),
  };
}
