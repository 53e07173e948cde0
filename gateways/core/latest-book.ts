/**
 * The newest book of one coin a caller may read, from the latest-state view (no NATS round trip):
 * the answer of JSON-RPC `md_midPrice` / `md_l2Book` and gRPC `GetMidPrice` / `GetBook`. The coin
 * and source go through the subscription core (subscribe.ts), so spelling, `chain:*` scopes and
 * the caller's own coins are decided in one place (`options.signal`: a caller that has gone asks
 * JetStream nothing). A coin the feed does not track is
 * `coin_not_found`; a tracked coin without a book yet from the readable sources, or the view while
 * NATS is unreachable (it may be stale), is `feed_unavailable`. Without a source, the most recent
 * book among the readable sources answers.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Source } from '../../contracts/events.ts';
import type { FeedEvent } from './feed-event.ts';
import type { Principal } from './guard.ts';
import type { LatestState } from './latest-state.ts';
import {
  allowedSources,
  knownSpelling,
  type SubscribeDeps,
  type SubscribeOptions,
  subscribeResolving,
} from './subscribe.ts';

export type LatestBookDeps = SubscribeDeps & { latest: LatestState };

/**
 * The book, at once when the coin is the platform's (its spelling and the readable sources, as
 * the subscription core decides them, without building a subscription: a batch asks a hundred
 * times), else once the viewer's own coins are looked up. A refusal is thrown, or rejects the
 * promise.
 */
export function latestBook(
  deps: LatestBookDeps,
  coin: string,
  source: Source | undefined,
  principal: Pick<Principal, 'accountId' | 'sources'>,
  options: SubscribeOptions = {},
): FeedEvent | Promise<FeedEvent> {
  if (!deps.latest.available())
    throw new ApiError('feed_unavailable', 'the market data log is unreachable; retry shortly');
  const known = knownSpelling(deps, coin);
  if (known !== null)
    return newestBook(deps, known, allowedSources(source ? [source] : null, principal.sources), source);
  const request = { coins: [coin], ...(source ? { sources: [source] } : {}) };
  return subscribeResolving(deps, request, principal, options).then(({ selection, warnings }) => {
    if (warnings.length > 0) throw new ApiError('coin_not_found', `not tracked: ${coin}`, { coins: [coin] });
    return newestBook(deps, [...(selection.coins ?? [])][0] as string, selection.sources, source);
  });
}

function newestBook(
  deps: LatestBookDeps,
  tracked: string,
  sources: ReadonlySet<string> | null,
  source: Source | undefined,
): FeedEvent {
  let best: FeedEvent | null = null;
  for (const [src, state] of deps.latest.sourcesOf(tracked))
    if (state.book && (!sources || sources.has(src)) && (!best || state.book.seq > best.seq))
      best = state.book;
  if (!best)
    throw new ApiError(
      'feed_unavailable',
      `no book yet for ${tracked}${source ? ` from ${source}` : ''}; the feed has not published one`,
      { coin: tracked, ...(source ? { source } : {}) },
    );
  return best;
}
