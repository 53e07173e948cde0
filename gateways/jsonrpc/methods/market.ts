/**
 * Market state from the latest-state view (no NATS round trip): `md_coins`, `md_midPrice`,
 * `md_l2Book`. Which book answers (and -32003 / -32004) is the core's `latestBook`, shared with
 * gRPC. Each book's answer is encoded once and shared by every call that reads it.
 */
import { ApiError } from '../../../contracts/errors.ts';
import type { Source } from '../../../contracts/events.ts';
import { MAX_BOOK_DEPTH, type ParamsOf } from '../../../contracts/jsonrpc.ts';
import type { FeedEvent } from '../../core/feed-event.ts';
import { latestBook as readLatestBook } from '../../core/latest-book.ts';
import { fieldsOf } from '../../core/latest-state.ts';
import { type CallContext, type EdgeDeps, type Json, toJson } from '../context.ts';
import { budgetOf } from '../request-budget.ts';

const midCache = new WeakMap<FeedEvent, Json>();
const fullBookCache = new WeakMap<FeedEvent, Json>();

function midPriceOf(ev: FeedEvent): Json {
  let json = midCache.get(ev);
  if (!json) {
    const f = fieldsOf(ev);
    json = toJson({
      coin: ev.symbol,
      source: ev.source,
      mid_price: f.mid_price,
      best_bid: f.best_bid,
      best_ask: f.best_ask,
      spread_bps: f.spread_bps,
      seq: ev.seq,
      timestamp_ms: f.timestamp_ms,
    });
    midCache.set(ev, json);
  }
  return json;
}

function bookOf(ev: FeedEvent, depth: number): Json {
  const f = fieldsOf(ev);
  const whole = depth >= f.bids.length && depth >= f.asks.length;
  const cached = whole ? fullBookCache.get(ev) : undefined;
  if (cached) return cached;
  const json = toJson({
    coin: ev.symbol,
    source: ev.source,
    seq: ev.seq,
    timestamp_ms: f.timestamp_ms,
    best_bid: f.best_bid,
    best_ask: f.best_ask,
    mid_price: f.mid_price,
    spread_bps: f.spread_bps,
    bids: whole ? f.bids : f.bids.slice(0, depth),
    asks: whole ? f.asks : f.asks.slice(0, depth),
  });
  if (whole) fullBookCache.set(ev, json);
  return json;
}

export function marketMethods(deps: EdgeDeps) {
  const latestBook = (
    coin: string,
    source: Source | undefined,
    ctx: CallContext,
  ): FeedEvent | Promise<FeedEvent> =>
    // Own coins through the request's budget: one lookup per request, none once the client has gone.
    // (The budget's lookup, not a closure made per call: a batch makes a hundred calls.)
    readLatestBook(deps, coin, source, ctx.principal, budgetOf(deps.nats, ctx).subscribeOptions);

  return {
    md_coins: (_: ParamsOf<'md_coins'>, ctx: CallContext): Json => {
      const allowed = ctx.principal.sources;
      const coins = new Set([...deps.tail.health.coins(), ...[...deps.latest.entries()].map(([c]) => c)]);
      const out = [];
      for (const coin of [...coins].sort()) {
        const sources = [];
        let published = false;
        for (const [source, state] of deps.latest.sourcesOf(coin)) {
          published = true;
          if (allowed && !allowed.has(source)) continue;
          const times = [state.book, state.trade].map((ev) => (ev ? fieldsOf(ev).timestamp_ms : null));
          const last = Math.max(...times.map((t) => t ?? -1));
          sources.push({ source, last_event_ms: last < 0 ? null : last });
        }
        if (published && sources.length === 0) continue;
        sources.sort((a, b) => a.source.localeCompare(b.source));
        const last = Math.max(-1, ...sources.map((s) => s.last_event_ms ?? -1));
        out.push({ coin, sources, last_event_ms: last < 0 ? null : last });
      }
      return toJson(out);
    },

    // Answered in the same turn when the coin is the platform's (no promise per call of a batch).
    md_midPrice: (p: ParamsOf<'md_midPrice'>, ctx: CallContext): Json | Promise<Json> => {
      const book = latestBook(p.coin, p.source, ctx);
      return book instanceof Promise ? book.then(midPriceOf) : midPriceOf(book);
    },

    md_l2Book: (p: ParamsOf<'md_l2Book'>, ctx: CallContext): Json | Promise<Json> => {
      if (p.depth !== undefined && p.depth > MAX_BOOK_DEPTH)
        throw new ApiError(
          'snapshot_too_large',
          `depth ${p.depth} is over ${MAX_BOOK_DEPTH} levels per side`,
          {
            field: 'depth',
            limit: MAX_BOOK_DEPTH,
          },
        );
      const depth = p.depth ?? MAX_BOOK_DEPTH;
      const book = latestBook(p.coin, p.source, ctx);
      return book instanceof Promise ? book.then((b) => bookOf(b, depth)) : bookOf(book, depth);
    },
  };
}
