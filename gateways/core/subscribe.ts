/**
 * A Subscription (what a client asked for, contracts/subscription.ts) turned into a Selection
 * (what it will be delivered), the same for every transport:
 * - coins are resolved against the platform's known coins, then the viewer's own published coins
 *   (exact spelling first, then upper case); unknown ones become `coin_not_found` warnings, and
 *   if none is known the request fails with `coin_not_found`; the viewer's own coins cost one
 *   JetStream request per subscription at most (own-coins.ts), none when every coin is the
 *   platform's, and none once the caller has gone (`signal` aborted);
 * - sources are limited by the key's `chain:*` scopes: asking for a source outside them is 403;
 * - the viewer (the principal's account) sees its own `stream: true` events too.
 * `initialStaleFeeds` names the selected feeds already stale, so a new client hears it at once.
 */
import { ApiError } from '../../contracts/errors.ts';
import type { Subscription } from '../../contracts/subscription.ts';
import type { Nats } from '../../platform/nats.ts';
import type { Principal } from './guard.ts';
import type { LiveTail } from './live-tail.ts';
import { type OwnCoinLookup, ownCoinLookup } from './own-coins.ts';
import type { Selection } from './selection.ts';
import { viewerOf } from './visibility.ts';

/** A non-terminal warning to send before the first event. */
export type SubscribeWarning = { code: 'coin_not_found'; message: string; coin: string };

export type Subscribed = {
  selection: Selection;
  warnings: SubscribeWarning[];
  /** Resume after this stream sequence; null: live only (or from `window.fromMs`). */
  lastEventId: number | null;
  /** With a viewer: resume its own events (`OWN`) after this sequence; null: as own-feed.ts says. */
  lastOwnSeq: number | null;
  /** A replay by time (`from`, `to`, `speed`); null: none asked. */
  window: ReplayWindow | null;
};

/** A replay by time as asked: instants in Unix ms, speed null for `max`. */
export type ReplayWindow = { fromMs: number | null; toMs: number | null; speed: number | null };

function windowOf(request: Subscription): ReplayWindow | null {
  const { from_ms, to_ms, speed } = request;
  if (from_ms === undefined && to_ms === undefined && speed === undefined) return null;
  return {
    fromMs: from_ms ?? null,
    toMs: to_ms ?? null,
    speed: speed === undefined || speed === 'max' ? null : speed,
  };
}

export type SubscribeDeps = { nats: Nats; tail: LiveTail };

export type SubscribeOptions = {
  /** Aborts when the caller has gone: no JetStream request is made after it. */
  signal?: AbortSignal;
  /** The viewer's own coins, shared by several subscriptions of one request (JSON-RPC batch). */
  ownCoins?: OwnCoinLookup;
};

export async function subscribe(
  deps: SubscribeDeps,
  request: Subscription,
  principal: Pick<Principal, 'accountId' | 'sources'>,
  options: SubscribeOptions = {},
): Promise<Subscribed> {
  return subscribeKnown(deps, request, principal) ?? subscribeResolving(deps, request, principal, options);
}

/** `subscribe` once `subscribeKnown` has said no: the viewer's own coins are looked up. */
export async function subscribeResolving(
  deps: SubscribeDeps,
  request: Subscription,
  principal: Pick<Principal, 'accountId' | 'sources'>,
  options: SubscribeOptions = {},
): Promise<Subscribed> {
  const viewer = viewerOf(principal);
  const owned = options.ownCoins ?? ownCoinLookup(deps.nats, viewer, options.signal);
  const coins = request.coins ? await resolveCoins(deps, request.coins, owned) : null;
  return subscribed(request, principal, coins);
}

/**
 * The same answer as `subscribe`, at once, when no coin needs the viewer's own coins (every coin
 * named is the platform's, as spelled or in upper case, or none is named); null otherwise. (The
 * unary reads of one book take its two parts, `knownSpelling` and `allowedSources`: latest-book.ts.)
 */
function subscribeKnown(
  deps: SubscribeDeps,
  request: Subscription,
  principal: Pick<Principal, 'accountId' | 'sources'>,
): Subscribed | null {
  if (!request.coins) return subscribed(request, principal, null);
  const known: string[] = [];
  for (const c of request.coins) {
    const hit = knownSpelling(deps, c);
    if (hit === null) return null;
    known.push(hit);
  }
  return subscribed(request, principal, { known: [...new Set(known)], unknown: [] });
}

/** How the platform's feed spells `coin` (as asked, or upper-cased), null when it does not know it. */
export function knownSpelling(deps: SubscribeDeps, coin: string): string | null {
  if (deps.tail.health.knows(coin)) return coin;
  const upper = coin.toUpperCase();
  return deps.tail.health.knows(upper) ? upper : null;
}

function subscribed(
  request: Subscription,
  principal: Pick<Principal, 'accountId' | 'sources'>,
  coins: { known: string[]; unknown: string[] } | null,
): Subscribed {
  if (coins && coins.known.length === 0)
    throw new ApiError('coin_not_found', `not tracked: ${coins.unknown.join(', ')}`);
  const viewer = viewerOf(principal);
  return {
    selection: {
      coins: coins ? new Set(coins.known) : null,
      eventTypes: request.event_types ? new Set(request.event_types) : null,
      sources: allowedSources(request.sources ?? null, principal.sources),
      viewer,
    },
    warnings: (coins?.unknown ?? []).map((coin) => ({
      code: 'coin_not_found',
      message: `coin ${coin} is not tracked; the stream goes on for the others`,
      coin,
    })),
    lastEventId: request.last_event_id ?? null,
    lastOwnSeq: request.last_own_seq ?? null,
    window: windowOf(request),
  };
}

/** A feed stale when a client connects: a coin and its source (absent: no source has published it yet). */
export type StaleFeed = { coin: string; source?: string };

/**
 * Each stale (coin, source) of the selection (all known coins when none is named), as every
 * transport reports it on connect (SSE, gRPC, disk-sync): a silent venue is named even while
 * another source keeps publishing the same coin.
 */
export function initialStaleFeeds(tail: LiveTail, selection: Selection): StaleFeed[] {
  return [...(selection.coins ?? tail.health.coins())].flatMap((coin) =>
    tail.health
      .staleFeeds(coin, selection.sources)
      .map((source) => (source === null ? { coin } : { coin, source })),
  );
}

/** Each coin as the platform spells it, else as the viewer's own account does (exact, then upper case). */
async function resolveCoins(
  deps: SubscribeDeps,
  coins: readonly string[],
  owned: OwnCoinLookup,
): Promise<{ known: string[]; unknown: string[] }> {
  const known: string[] = [];
  const unknown: string[] = [];
  const spellingsOf = (c: string) => [...new Set([c, c.toUpperCase()])];
  const notPlatform = coins.filter((c) => !spellingsOf(c).some((x) => deps.tail.health.knows(x)));
  const own = notPlatform.length > 0 ? await owned(notPlatform.flatMap(spellingsOf)) : new Set<string>();
  for (const c of coins) {
    const spellings = spellingsOf(c);
    const hit = spellings.find((x) => deps.tail.health.knows(x)) ?? spellings.find((x) => own.has(x));
    if (hit) known.push(hit);
    else unknown.push(c);
  }
  return { known: [...new Set(known)], unknown };
}

/** Requested sources within what the key's chain scopes allow; asking for more is a 403. */
export function allowedSources(
  requested: readonly string[] | null,
  allowed: ReadonlySet<string> | null,
): ReadonlySet<string> | null {
  if (!allowed) return requested ? new Set(requested) : null;
  if (!requested) return allowed;
  const outside = requested.filter((s) => !allowed.has(s));
  if (outside.length > 0)
    throw new ApiError('forbidden', `this key is limited to sources ${[...allowed].join(', ')}`);
  return new Set(requested);
}
